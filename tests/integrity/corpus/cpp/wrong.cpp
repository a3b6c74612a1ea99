#include <string>
int add(int a, int b) { return a - b; }
double half(double x) { return x / 3; }
std::string reverse(std::string s) { return s; }
