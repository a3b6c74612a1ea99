import java.util.*;
class Solution {
    int add(int a, int b) { return a - b; }
    List<Integer> sorted(List<Integer> xs) { return new ArrayList<>(xs); }
}
