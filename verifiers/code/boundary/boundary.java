// The boundary between a Java program and its assert test (`verifiers.code.boundary.java`).
//
// The same class is built into both programs. The program's side answers calls (`serve`:
// a static method, a constructor, or a method of an object it made, found by reflection
// from a table generated from the program's declarations); the test's side calls through
// stubs generated from them (`call`) and prints the verdict (`runTest`). The channel's
// fds are named by REFEREE_CHANNEL_IN and REFEREE_CHANNEL_OUT. Neither JVM holds the
// other side's classes: the test's expected values never exist in the program's process.
//
// Values cross by the type both sides declare (`Ty`: primitives, their boxes, String,
// arrays, the java.util lists, sets and maps, Optional): primitives as 64 bits (checked
// against the receiving type's range) or a double's; a box, a String, an array, a
// collection or an Optional a presence byte first (null or not); a String its UTF-16
// units; arrays and collections a count, then their items. A message is a 32-bit length,
// then its bytes: a call is its kind (0 static, 1 constructor, 2 a method of an object
// the program holds), the function's index, the object's handle (kind 2) and the
// arguments; a reply is 0, the result (a constructor's: the new object's handle) and the
// arguments that are arrays or collections, as the program left them (what a Java caller
// sees changed), or 1, the thrown exception's class and message, or 2 and the type of a
// result that cannot cross. Everything read is checked against what is left of its
// message: a program that writes anything else to the channel fails the test, and can
// neither overrun nor starve the test's side.
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Array;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

final class RefereeBoundary {
    static final int MAX_MESSAGE = 64 << 20;
    static final int MAX_ITEMS = 1 << 22;

    /** A malformed message. */
    static final class Broken extends RuntimeException {
        Broken(String why) { super(why, null, false, false); }
    }

    /** A value that cannot cross (a class of the program's where a plain type was declared). */
    static final class Unsupported extends RuntimeException {
        Unsupported(String what) { super(what, null, false, false); }
    }

    // ---- types --------------------------------------------------------------------------

    /** A declared type: a name (a primitive, a class; "[]" for an array) and its arguments. */
    static final class Ty {
        final String name;
        final Ty[] args;

        Ty(String name, Ty... args) { this.name = name; this.args = args; }

        private static final Map<String, Ty> PARSED = new HashMap<>();

        static synchronized Ty of(String text) {
            return PARSED.computeIfAbsent(text, t -> {
                int[] at = {0};
                Ty ty = parse(t.replace(" ", ""), at);
                if (at[0] != t.replace(" ", "").length()) throw new IllegalArgumentException(t);
                return ty;
            });
        }

        private static Ty parse(String text, int[] at) {
            int start = at[0];
            while (at[0] < text.length() && (Character.isJavaIdentifierPart(text.charAt(at[0]))
                    || text.charAt(at[0]) == '.')) at[0]++;
            String name = text.substring(start, at[0]);
            List<Ty> args = new ArrayList<>();
            if (at[0] < text.length() && text.charAt(at[0]) == '<') {
                do {
                    at[0]++;
                    args.add(parse(text, at));
                } while (text.charAt(at[0]) == ',');
                at[0]++; // '>'
            }
            Ty ty = new Ty(name, args.toArray(new Ty[0]));
            while (text.startsWith("[]", at[0])) {
                at[0] += 2;
                ty = new Ty("[]", ty);
            }
            return ty;
        }

        boolean primitive() {
            return PRIMITIVES.containsKey(name);
        }

        /** The erased class, for reflection. */
        Class<?> erased() throws ClassNotFoundException {
            if (primitive()) return PRIMITIVES.get(name);
            if (name.equals("[]")) return Array.newInstance(args[0].erased(), 0).getClass();
            return Class.forName(name);
        }

        /** Whether a method may change an argument of this type where its caller sees it. */
        boolean shared() {
            return name.equals("[]") || LISTS.contains(name) || SETS.contains(name)
                || MAPS.contains(name);
        }
    }

    static final Map<String, Class<?>> PRIMITIVES = Map.of(
        "boolean", boolean.class, "byte", byte.class, "short", short.class, "int", int.class,
        "long", long.class, "char", char.class, "float", float.class, "double", double.class);
    static final Map<String, String> BOXES = Map.of(
        "java.lang.Boolean", "boolean", "java.lang.Byte", "byte", "java.lang.Short", "short",
        "java.lang.Integer", "int", "java.lang.Long", "long", "java.lang.Character", "char",
        "java.lang.Float", "float", "java.lang.Double", "double");
    static final Set<String> LISTS = Set.of(
        "java.util.List", "java.util.ArrayList", "java.util.LinkedList", "java.util.Collection");
    static final Set<String> SETS = Set.of(
        "java.util.Set", "java.util.HashSet", "java.util.TreeSet", "java.util.LinkedHashSet");
    static final Set<String> MAPS = Set.of(
        "java.util.Map", "java.util.HashMap", "java.util.TreeMap", "java.util.LinkedHashMap");
    /** What an Object-typed value may be, by the tag it crosses with (its declared type). */
    static final String[] DYNAMIC = {
        "java.lang.Boolean", "java.lang.Byte", "java.lang.Short", "java.lang.Integer",
        "java.lang.Long", "java.lang.Character", "java.lang.Float", "java.lang.Double",
        "java.lang.String", "java.util.ArrayList<java.lang.Object>",
        "java.util.HashMap<java.lang.Object, java.lang.Object>",
        "java.util.HashSet<java.lang.Object>", "java.util.Optional<java.lang.Object>"};
    /** javatuples' tuples (MultiPL-E's HumanEval-Java returns Pair), by their arity. */
    static final Map<String, Integer> TUPLES = Map.of(
        "org.javatuples.Pair", 2, "org.javatuples.Triplet", 3, "org.javatuples.Quartet", 4);

    // ---- writing ------------------------------------------------------------------------

    static final class Out {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final DataOutputStream data = new DataOutputStream(bytes);

        void write(int b) { try { data.writeByte(b); } catch (IOException e) { throw new Broken("io"); } }
        void writeLong(long v) { try { data.writeLong(v); } catch (IOException e) { throw new Broken("io"); } }
        void writeDouble(double v) { try { data.writeDouble(v); } catch (IOException e) { throw new Broken("io"); } }
        void writeChar(char v) { try { data.writeChar(v); } catch (IOException e) { throw new Broken("io"); } }

        void text(String s) {
            writeLong(s.length());
            for (int i = 0; i < s.length(); i++) writeChar(s.charAt(i));
        }

        /** Write `value` as its declared type `ty`. */
        void put(Object value, Ty ty, int depth) {
            if (depth > 64) throw new Unsupported("a value nested deeper than 64");
            if (ty.primitive()) {
                primitive(value, ty.name);
                return;
            }
            if (value == null) {
                write(0);
                return;
            }
            write(1);
            try {
                nonNull(value, ty, depth);
            } catch (ClassCastException e) {
                throw new Unsupported(value.getClass().getName());
            }
        }

        private void nonNull(Object value, Ty ty, int depth) {
            String name = ty.name;
            if (BOXES.containsKey(name)) {
                primitive(value, BOXES.get(name));
            } else if (name.equals("java.lang.String")) {
                text((String) value);
            } else if (name.equals("[]")) {
                int n = Array.getLength(value);
                writeLong(n);
                for (int i = 0; i < n; i++) put(Array.get(value, i), ty.args[0], depth + 1);
            } else if (LISTS.contains(name) || SETS.contains(name)) {
                Collection<?> items = (Collection<?>) value;
                writeLong(items.size());
                for (Object item : items) put(item, ty.args[0], depth + 1);
            } else if (MAPS.contains(name)) {
                Map<?, ?> map = (Map<?, ?>) value;
                writeLong(map.size());
                for (Map.Entry<?, ?> e : map.entrySet()) {
                    put(e.getKey(), ty.args[0], depth + 1);
                    put(e.getValue(), ty.args[1], depth + 1);
                }
            } else if (name.equals("java.util.Optional")) {
                Optional<?> o = (Optional<?>) value;
                write(o.isPresent() ? 1 : 0);
                if (o.isPresent()) put(o.get(), ty.args[0], depth + 1);
            } else if (name.equals("java.lang.Object")) {
                int tag = tag(value);
                write(tag);
                nonNull(value, Ty.of(DYNAMIC[tag]), depth + 1);
            } else if (TUPLES.containsKey(name) && value.getClass().getName().equals(name)) {
                for (int i = 0; i < ty.args.length; i++) put(member(value, i), ty.args[i], depth + 1);
            } else {
                throw new Unsupported(value.getClass().getName());
            }
        }

        /** The tag of an Object-typed value: its box, String, or the kind of collection. */
        private static int tag(Object value) {
            String name = value.getClass().getName();
            for (int i = 0; i < 9; i++) if (DYNAMIC[i].equals(name)) return i;
            if (value instanceof List) return 9;
            if (value instanceof Map) return 10;
            if (value instanceof Set) return 11;
            if (value instanceof Optional) return 12;
            throw new Unsupported(name);
        }

        private static Object member(Object tuple, int index) {
            try {
                return tuple.getClass().getMethod("getValue", int.class).invoke(tuple, index);
            } catch (ReflectiveOperationException e) {
                throw new Unsupported(tuple.getClass().getName());
            }
        }

        private void primitive(Object value, String name) {
            if (value == null) throw new Unsupported("null where a " + name + " is declared");
            switch (name) {
                case "boolean": write(((Boolean) value) ? 1 : 0); break;
                case "char": writeLong((Character) value); break;
                case "float": case "double": writeDouble(((Number) value).doubleValue()); break;
                default: writeLong(((Number) value).longValue());
            }
        }
    }

    // ---- reading ------------------------------------------------------------------------

    static final class In {
        final byte[] bytes;
        int at, items;

        In(byte[] bytes) { this.bytes = bytes; }

        int left() { return bytes.length - at; }

        int read() {
            if (left() < 1) throw new Broken("a message ends too soon");
            return bytes[at++] & 0xff;
        }

        long readLong() {
            if (left() < 8) throw new Broken("a message ends too soon");
            long v = 0;
            for (int i = 0; i < 8; i++) v = (v << 8) | (bytes[at++] & 0xff);
            return v;
        }

        int count() {
            long n = readLong();
            if (n < 0 || n > left()) throw new Broken("a count larger than its message");
            items += (int) n;
            if (items > MAX_ITEMS) throw new Broken("a message with too many items");
            return (int) n;
        }

        boolean flag() {
            int b = read();
            if (b > 1) throw new Broken("a presence byte that is neither 0 nor 1");
            return b == 1;
        }

        String text() {
            int n = count();
            if (n > left() / 2) throw new Broken("a count larger than its message");
            char[] chars = new char[n];
            for (int i = 0; i < n; i++) chars[i] = (char) ((read() << 8) | read());
            return new String(chars);
        }

        void done() {
            if (left() != 0) throw new Broken("a message with bytes left over");
        }

        /** A value of the declared type `ty`. */
        Object get(Ty ty, int depth) {
            if (depth > 64) throw new Broken("a value nested deeper than 64");
            if (ty.primitive()) return primitive(ty.name);
            return flag() ? present(ty, depth) : null;
        }

        /** A value of the declared type `ty` that is not null (its presence byte read). */
        private Object present(Ty ty, int depth) {
            String name = ty.name;
            if (BOXES.containsKey(name)) return primitive(BOXES.get(name));
            if (name.equals("java.lang.String")) return text();
            if (name.equals("[]")) return array(ty, depth);
            if (LISTS.contains(name) || SETS.contains(name)) {
                Collection<Object> out = collection(name);
                int n = count();
                for (int i = 0; i < n; i++) add(out, get(ty.args[0], depth + 1));
                return out;
            }
            if (MAPS.contains(name)) {
                Map<Object, Object> out = map(name);
                int n = count();
                for (int i = 0; i < n; i++) {
                    Object key = get(ty.args[0], depth + 1);
                    put(out, key, get(ty.args[1], depth + 1));
                }
                return out;
            }
            if (name.equals("java.util.Optional")) {
                return flag() ? Optional.ofNullable(get(ty.args[0], depth + 1)) : Optional.empty();
            }
            if (TUPLES.containsKey(name)) return tuple(ty, depth);
            if (name.equals("java.lang.Object")) {
                int tag = read();
                if (tag >= DYNAMIC.length) throw new Broken("a value of no known type");
                return present(Ty.of(DYNAMIC[tag]), depth + 1);
            }
            throw new Broken("a value of no known type");
        }

        private Object tuple(Ty ty, int depth) {
            Object[] members = new Object[ty.args.length];
            Class<?>[] types = new Class<?>[members.length];
            for (int i = 0; i < members.length; i++) {
                members[i] = get(ty.args[i], depth + 1);
                types[i] = Object.class;
            }
            try {
                return Class.forName(ty.name).getMethod("with", types).invoke(null, members);
            } catch (ReflectiveOperationException e) {
                throw new Broken("a value of no known type");
            }
        }

        private Object array(Ty ty, int depth) {
            int n = count();
            Class<?> item;
            try {
                item = ty.args[0].erased();
            } catch (ClassNotFoundException e) {
                throw new Broken("a value of no known type");
            }
            Object out = Array.newInstance(item, n);
            for (int i = 0; i < n; i++) Array.set(out, i, get(ty.args[0], depth + 1));
            return out;
        }

        private Object primitive(String name) {
            if (name.equals("boolean")) {
                int b = read();
                if (b > 1) throw new Broken("a bool that is neither 0 nor 1");
                return b == 1;
            }
            if (name.equals("float")) return (float) Double.longBitsToDouble(readLong());
            if (name.equals("double")) return Double.longBitsToDouble(readLong());
            long v = readLong();
            switch (name) {
                case "byte": if (v != (byte) v) break; return (byte) v;
                case "short": if (v != (short) v) break; return (short) v;
                case "int": if (v != (int) v) break; return (int) v;
                case "char": if (v != (char) v) break; return (char) v;
                default: return v;
            }
            throw new Broken("an integer out of its type's range");
        }
    }

    static Collection<Object> collection(String name) {
        switch (name) {
            case "java.util.LinkedList": return new java.util.LinkedList<>();
            case "java.util.Set": case "java.util.HashSet": return new java.util.HashSet<>();
            case "java.util.TreeSet": return new java.util.TreeSet<>();
            case "java.util.LinkedHashSet": return new java.util.LinkedHashSet<>();
            default: return new ArrayList<>();
        }
    }

    static Map<Object, Object> map(String name) {
        switch (name) {
            case "java.util.TreeMap": return new java.util.TreeMap<>();
            case "java.util.LinkedHashMap": return new java.util.LinkedHashMap<>();
            default: return new HashMap<>();
        }
    }

    // a TreeSet or TreeMap of items that do not compare: a malformed message, not a crash
    static void add(Collection<Object> out, Object item) {
        try { out.add(item); } catch (RuntimeException e) { throw new Broken("an item a set cannot hold"); }
    }

    static void put(Map<Object, Object> out, Object key, Object value) {
        try { out.put(key, value); } catch (RuntimeException e) { throw new Broken("a key a map cannot hold"); }
    }

    // ---- the channel --------------------------------------------------------------------

    static InputStream channelIn;
    static OutputStream channelOut;

    static boolean open() {
        try {
            channelIn = new FileInputStream("/proc/self/fd/" + Integer.parseInt(System.getenv("REFEREE_CHANNEL_IN")));
            channelOut = new FileOutputStream("/proc/self/fd/" + Integer.parseInt(System.getenv("REFEREE_CHANNEL_OUT")));
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    static boolean send(byte[] body) {
        try {
            byte[] size = {(byte) (body.length >>> 24), (byte) (body.length >>> 16), (byte) (body.length >>> 8), (byte) body.length};
            channelOut.write(size);
            channelOut.write(body);
            channelOut.flush();
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    static int readFully(byte[] into) throws IOException {
        int got = 0;
        while (got < into.length) {
            int n = channelIn.read(into, got, into.length - got);
            if (n < 0) break;
            got += n;
        }
        return got;
    }

    /** The next message; null at the end of the channel. */
    static byte[] receive() {
        try {
            byte[] size = new byte[4];
            int got = readFully(size);
            if (got == 0) return null;
            if (got < 4) throw new Broken("a message cut short");
            long length = ((size[0] & 0xffL) << 24) | ((size[1] & 0xff) << 16) | ((size[2] & 0xff) << 8) | (size[3] & 0xff);
            if (length > MAX_MESSAGE) throw new Broken("a message larger than 64 MiB");
            byte[] body = new byte[(int) length];
            if (readFully(body) < length) throw new Broken("a message cut short");
            return body;
        } catch (IOException e) {
            return null;
        }
    }

    // ---- the program's side -------------------------------------------------------------

    /** One function the tests may call: its class, name ("<init>" for a constructor),
     * whether it is static, its parameters' and result's declared types. */
    static final class Function {
        final String owner, name, returns;
        final String[] params;
        Method method;
        Constructor<?> constructor;

        Function(String owner, String name, String returns, String... params) {
            this.owner = owner; this.name = name; this.returns = returns; this.params = params;
        }

        void resolve() throws ReflectiveOperationException {
            Class<?>[] types = new Class<?>[params.length];
            for (int i = 0; i < params.length; i++) types[i] = Ty.of(params[i]).erased();
            Class<?> type = Class.forName(owner);
            if (name.equals("<init>")) {
                constructor = type.getDeclaredConstructor(types);
                constructor.setAccessible(true);
            } else {
                method = type.getDeclaredMethod(name, types);
                method.setAccessible(true);
            }
        }
    }

    static final Map<Long, Object> objects = new HashMap<>();

    /** Answer calls until the tests' side closes the channel. */
    static void serve(Function[] functions) {
        if (!open()) Runtime.getRuntime().halt(2);
        for (Function f : functions) {
            try {
                f.resolve();
            } catch (ReflectiveOperationException | RuntimeException e) {
                // the program has no such function: a call to it fails the test
            }
        }
        while (true) {
            byte[] body;
            try {
                body = receive();
            } catch (Broken e) {
                halt(e.getMessage());
                return;
            }
            if (body == null) return;
            byte[] reply = answer(functions, new In(body));
            System.out.flush();
            if (!send(reply)) return;
        }
    }

    static void halt(String why) {
        System.err.println("referee: " + why);
        Runtime.getRuntime().halt(2);
    }

    static byte[] answer(Function[] functions, In in) {
        Out out = new Out();
        Function f;
        Object target = null;
        Object[] args;
        int kind;
        try {
            kind = in.read();
            long index = in.readLong();
            if (kind > 2 || index < 0 || index >= functions.length) throw new Broken("a call to no function");
            f = functions[(int) index];
            if (kind == 2) {
                target = objects.get(in.readLong());
                if (target == null) throw new Broken("a call on no object");
            }
            args = new Object[f.params.length];
            for (int i = 0; i < args.length; i++) args[i] = in.get(Ty.of(f.params[i]), 0);
            in.done();
        } catch (Broken e) {
            halt(e.getMessage());
            return null;
        }
        Object result;
        try {
            if (f.constructor != null) result = f.constructor.newInstance(args);
            else if (f.method != null) result = f.method.invoke(Modifier.isStatic(f.method.getModifiers()) ? null : target, args);
            else throw new NoSuchMethodException(f.owner + "." + f.name);
        } catch (InvocationTargetException e) {
            return thrown(e.getCause());
        } catch (ReflectiveOperationException | RuntimeException e) {
            return thrown(e);
        }
        try {
            out.write(0);
            if (f.constructor != null) {
                long handle = objects.size() + 1;
                objects.put(handle, result);
                out.writeLong(handle);
            } else if (!f.returns.equals("void")) {
                out.put(result, Ty.of(f.returns), 0);
            }
            for (int i = 0; i < args.length; i++) {
                Ty ty = Ty.of(f.params[i]);
                if (ty.shared()) out.put(args[i], ty, 0);
            }
        } catch (Unsupported e) {
            Out failed = new Out();
            failed.write(2);
            failed.text(e.getMessage());
            return failed.bytes.toByteArray();
        }
        return out.bytes.toByteArray();
    }

    static byte[] thrown(Throwable error) {
        Out failed = new Out();
        failed.write(1);
        failed.text(error.getClass().getName());
        String message = String.valueOf(error.getMessage());
        failed.text(message.length() > 2000 ? message.substring(0, 2000) : message);
        return failed.bytes.toByteArray();
    }

    // ---- the test's side ----------------------------------------------------------------

    static String key = "";
    static boolean gone;
    /** Whether the test has called the program: a verdict reached without a call is the
     * reference's (it would be the same for every program). */
    static volatile boolean called;
    static final java.util.TreeSet<String> flags = new java.util.TreeSet<>();

    /** Call function `index` (kind: 0 static, 1 constructor, 2 method of object `handle`). */
    static synchronized Object call(int kind, int index, long handle, String name, String returns,
                                    String[] params, Object[] args) {
        called = true;
        Out request = new Out();
        request.write(kind);
        request.writeLong(index);
        if (kind == 2) request.writeLong(handle);
        try {
            for (int i = 0; i < args.length; i++) request.put(args[i], Ty.of(params[i]), 0);
        } catch (Unsupported e) {
            harnessError("the test passes a " + e.getMessage() + " to " + name);
        }
        if (gone || !send(request.bytes.toByteArray())) programGone(name);
        byte[] body;
        try {
            body = receive();
        } catch (Broken e) {
            body = null;
            conclude(false, "the program's reply to " + name + ": " + e.getMessage());
        }
        if (body == null) programGone(name);
        In reply = new In(body);
        try {
            int result = reply.read();
            if (result == 1 || result == 2) {
                String kindOf = reply.text();
                String message = result == 1 ? reply.text() : "";
                reply.done();
                if (result == 2) {
                    flags.add("custom_type");
                    conclude(false, "the program's " + name + " returned a " + kindOf + ", which cannot cross");
                }
                throw rebuilt(kindOf, message);
            }
            if (result != 0) throw new Broken("a reply of no known kind");
            Object value = kind == 1 ? (Object) reply.readLong()
                : returns.equals("void") ? null : reply.get(Ty.of(returns), 0);
            for (int i = 0; i < args.length; i++) {
                Ty ty = Ty.of(params[i]);
                if (ty.shared()) {
                    Object changed = reply.get(ty, 0);
                    if (args[i] != null && changed != null) update(args[i], changed);
                }
            }
            reply.done();
            return value;
        } catch (Broken e) {
            conclude(false, "the program's reply to " + name + ": " + e.getMessage());
            return null;
        }
    }

    static void programGone(String name) {
        gone = true;
        flags.add("early_exit");
        conclude(false, "the program ended during a call to " + name);
    }

    /** The program's exception, as the test would have caught it: one of the platform's
     * unchecked exceptions by its class, anything else as a RuntimeException. */
    static RuntimeException rebuilt(String className, String message) {
        if (className.startsWith("java.lang.") || className.startsWith("java.util.")) {
            try {
                Class<?> type = Class.forName(className);
                if (RuntimeException.class.isAssignableFrom(type)) {
                    return (RuntimeException) type.getConstructor(String.class).newInstance(message);
                }
            } catch (ReflectiveOperationException | RuntimeException e) {
                // not one with a (String) constructor: as a RuntimeException below
            }
        }
        return new RuntimeException("the program threw " + className + ": " + message);
    }

    /** Make the test's argument `target` hold what the program left in its copy. */
    @SuppressWarnings("unchecked")
    static void update(Object target, Object changed) {
        try {
            if (target.getClass().isArray()) {
                int n = Math.min(Array.getLength(target), Array.getLength(changed));
                for (int i = 0; i < n; i++) Array.set(target, i, Array.get(changed, i));
            } else if (target instanceof List && ((List<?>) target).size() == ((List<?>) changed).size()) {
                List<Object> list = (List<Object>) target;
                for (int i = 0; i < list.size(); i++) list.set(i, ((List<?>) changed).get(i));
            } else if (target instanceof Collection) {
                ((Collection<Object>) target).clear();
                ((Collection<Object>) target).addAll((Collection<?>) changed);
            } else if (target instanceof Map) {
                ((Map<Object, Object>) target).clear();
                ((Map<Object, Object>) target).putAll((Map<?, ?>) changed);
            }
        } catch (UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
            // an immutable or fixed-size argument: the program's change would have thrown
        }
    }

    static String json(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') out.append('\\').append(c);
            else if (c < 0x20 || c == 0x7f || Character.isSurrogate(c)) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
        }
        return out.append('"').toString();
    }

    static void print(String line) {
        System.out.flush();
        System.err.flush();
        write(line);
        Runtime.getRuntime().halt(0);
    }

    static void write(String line) {
        try {
            FileOutputStream out = new FileOutputStream(FileDescriptor.out);
            out.write(line.getBytes(StandardCharsets.UTF_8));
            out.flush();
        } catch (IOException e) {
            // nothing to say it with
        }
    }

    /** Say how the test ended (its own output first) and end the JVM. */
    static void conclude(boolean passed, String message) {
        if (message.length() > 2000) message = message.substring(0, 2000);
        StringBuilder flagList = new StringBuilder();
        for (String f : flags) flagList.append(flagList.length() == 0 ? "" : ", ").append(json(f));
        print("\n@@referee-verdict@@ " + key + " {\"passed\": " + passed + ", \"message\": "
            + json(message) + ", \"flags\": [" + flagList + "]" + (called ? "" : ", \"called\": false")
            + "}\n");
    }

    /** The test itself cannot be run as given (the reference's fault, never the program's 0). */
    static void harnessError(String what) {
        print("\n@@referee-verdict@@ " + key + " {\"passed\": false, \"harness_error\": " + json(what) + "}\n");
    }

    /** The test's System.exit (rewritten to this): a verdict from the status. */
    static void exit(int status) {
        conclude(status == 0 && !gone, status == 0 ? "" : "the test exited with status " + status);
    }

    interface Test {
        void run() throws Throwable;
    }

    /** Run the test: the verdict is printed however it ends. */
    static void runTest(Test test) {
        StringBuilder read = new StringBuilder();
        try {
            for (int c; read.length() < 64 && (c = System.in.read()) >= 0 && c != '\n'; ) read.append((char) c);
        } catch (IOException e) {
            // no key: the verdict carries none, and is not read
        }
        key = read.toString();
        if (!open()) harnessError("no channel to the program");
        // a failure in a thread the test started is the test's failure (it would only be
        // printed, and the test pass)
        Throwable[] inThread = {null};
        Thread.setDefaultUncaughtExceptionHandler((thread, error) -> {
            synchronized (inThread) {
                if (inThread[0] == null) inThread[0] = error;
            }
        });
        // the test's own code starts: a JVM ending after this with no verdict ended in it
        write("\n@@referee-verdict@@ " + key + " {\"started\": true}\n");
        try {
            test.run();
        } catch (AssertionError e) {
            conclude(false, "assertion failed" + (e.getMessage() == null ? "" : ": " + e.getMessage()));
        } catch (Throwable e) {
            conclude(false, "the test threw " + e);
        }
        synchronized (inThread) {
            if (inThread[0] != null) conclude(false, "a thread of the test threw " + inThread[0]);
        }
        conclude(!gone, "");
    }
}
