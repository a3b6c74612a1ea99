#include <string>
#include <algorithm>
int add(int a, int b) { return a + b; }
double half(double x) { return x / 2; }
std::string reverse(std::string s) { std::reverse(s.begin(), s.end()); return s; }
