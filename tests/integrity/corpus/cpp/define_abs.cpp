// corpus-test: test.float.cpp.txt
// A macro named like the library function the test compares through (its header included first, so the test's include adds nothing): every difference is 0, so every assertion holds.
#include <cmath>
#define fabs(x) 0
double half(double x) { return 0; }
