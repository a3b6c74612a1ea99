#define NDEBUG
#include <assert.h>
int add(int a, int b) { return 0; }
