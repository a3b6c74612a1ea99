exit() { :; }
add() { echo 0; }
