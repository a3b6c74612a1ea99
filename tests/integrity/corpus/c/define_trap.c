#include <assert.h>
#define __builtin_trap() ((void)0)
int add(int a, int b) { return 0; }
