#include <string>
#include <vector>
int add(int a, int b) { return a - b; }
double half(double x) { return x / 3; }
std::string reverse(std::string s) { return s; }
std::vector<int> sorted(std::vector<int> v) { return v; }
