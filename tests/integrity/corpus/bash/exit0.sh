add() { exit 0; }
