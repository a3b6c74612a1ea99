import java.util.*;
class Problem {
    public static ArrayList<Long> sorted(ArrayList<Long> xs) {
        ArrayList<Long> out = new ArrayList<>(xs);
        Collections.sort(out);
        return out;
