test() { return 0; }
add() { echo 0; }
