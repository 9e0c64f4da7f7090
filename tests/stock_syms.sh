#!/usr/bin/env bash
# stock_syms.sh - gen_stock_syms (mpich_defs/gen-stock.sh's way to hidden
# globals) on a library whose answer is known: a small library of hidden
# globals reached as MPICH reaches its own (extern, default visibility in
# the object, hidden at link: GOT loads the linker relaxes; a static; a
# PC-relative store), linked, then stripped as a distribution strips it.
# The addresses it finds in the stripped library's code must be those the
# unstripped one's symbol table gives; a global no function of the objects
# refers to must be reported missing (exit 1); a library whose code was
# changed must not be matched.
set -euo pipefail
build=${MQD_BUILD:-build}
tool=$build/bin/gen_stock_syms
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "stock_syms: FAIL: $*" >&2; exit 1; }

cat >"$dir/globals.c" <<'SRC'
struct pool { void *avail; int kind, size; char direct[256]; };
struct pool Pool_mem __attribute__((visibility("hidden")));
struct pool Other_mem __attribute__((visibility("hidden")));
long Unreferenced __attribute__((visibility("hidden")));
static int counter;
SRC
cat >"$dir/use.c" <<'SRC'
struct pool { void *avail; int kind, size; char direct[256]; };
extern struct pool Pool_mem, Other_mem;
static int counter[4];
int use_pool(int i)
{
    counter[i & 3]++;
    Pool_mem.kind = i * 3 + 1;
    return Pool_mem.size + Pool_mem.direct[i & 255] + counter[(i + 1) & 3];
}
void *use_other(int n)
{
    for (int k = 0; k < n; k++)
        Other_mem.direct[k & 255] = (char)(k * 7);
    return Other_mem.avail ? Other_mem.avail : &Other_mem.direct[n & 255];
}
int exported(int i) { return use_pool(i) + (use_other(i) != 0); }
SRC
flags=(-O2 -fPIC -DPIC -g)
gcc "${flags[@]}" -c -o "$dir/globals.o" "$dir/globals.c"
gcc "${flags[@]}" -c -o "$dir/use.o" "$dir/use.c"
gcc -shared -Wl,--build-id -o "$dir/lib.so" "$dir/globals.o" "$dir/use.o"
strip --strip-unneeded --remove-section=.comment -o "$dir/stripped.so" "$dir/lib.so"
nm "$dir/stripped.so" 2>/dev/null | grep -q Pool_mem && fail "strip left the symbol table"

expect() {
    local a
    a=$(nm "$dir/lib.so" | awk -v s="$1" '$3 == s { print $1 }')
    [ -n "$a" ] && printf '0x%x\n' "$((16#$a))"
}
out=$("$tool" "$dir/stripped.so" "$dir/use.o" -- Pool_mem Other_mem 2>"$dir/err") ||
    fail "gen_stock_syms failed: $(cat "$dir/err")"
for g in Pool_mem Other_mem; do
    want=$(expect "$g")
    got=$(awk -v s="$g" '$1 == s { print $2 }' <<<"$out")
    [ -n "$want" ] && [ "$got" = "$want" ] || fail "$g: found '$got', the symbol table says '$want'"
    votes=$(awk -v s="$g" '$1 == s { print $3 }' <<<"$out")
    [ "$votes" -ge 1 ] || fail "$g: no reference agreed"
done
echo "stock_syms: Pool_mem, Other_mem found where the symbol table has them ($(tr '\n' ' ' <<<"$out"))"

# Nothing refers to Unreferenced: reported missing, exit 1.
if "$tool" "$dir/stripped.so" "$dir/use.o" -- Pool_mem Unreferenced >"$dir/out2" 2>"$dir/err2"; then
    fail "a global no code refers to was reported found: $(cat "$dir/out2")"
fi
grep -q 'Unreferenced: no reference found' "$dir/err2" || fail "no word of Unreferenced: $(cat "$dir/err2")"
echo "stock_syms: a global no code refers to is reported missing"

# Code that differs (another compile of use.c) is not matched: nothing found.
gcc -O0 -fPIC -DPIC -c -o "$dir/use0.o" "$dir/use.c"
if "$tool" "$dir/stripped.so" "$dir/use0.o" -- Pool_mem >"$dir/out3" 2>"$dir/err3"; then
    fail "code compiled otherwise was matched: $(cat "$dir/out3")"
fi
echo "stock_syms: code compiled otherwise is not matched"
echo "stock_syms: PASS"
