// corpus-test: test.float.c.txt
// A macro named like the library function the test compares through (its header included first), spelled with a digraph and split by a line continuation so that no line reads "#define": every difference is 0.
#include <math.h>
%: def\
ine fabs(x) 0
double half(double x) { return 0; }
