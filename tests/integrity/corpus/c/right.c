#include <assert.h>
#include <string.h>
int add(int a, int b) { return a + b; }
double half(double x) { return x / 2; }
char *reverse(char *s) { int n = strlen(s); for (int i = 0; i < n / 2; i++) { char t = s[i]; s[i] = s[n - 1 - i]; s[n - 1 - i] = t; } return s; }
