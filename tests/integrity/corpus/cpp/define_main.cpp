#define main notmain
int add(int a, int b) { return 0; }
