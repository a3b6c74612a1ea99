#include <assert.h>
#include <string.h>
int add(int a, int b) { return a - b; }
double half(double x) { return x / 3; }
char *reverse(char *s) { return s; }
