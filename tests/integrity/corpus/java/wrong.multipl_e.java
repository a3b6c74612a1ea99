import java.util.*;
class Problem {
    public static ArrayList<Long> sorted(ArrayList<Long> xs) {
        return new ArrayList<>(xs);
