#!/usr/bin/env bash
# Print the path of a working Python X.Y interpreter, for the Makefile:
#   scripts/find_python.sh 3.12
# Tried in order: pythonX.Y on PATH (run, not just found: a pyenv shim for a version that is
# installed but not selected exits with an error), then the newest X.Y.* under pyenv's
# versions directory ($PYENV_ROOT, else ~/.pyenv), then /usr/bin and /usr/local/bin.
# Never downloads anything. Exits 1 with a message saying what to install when none works.
set -u
want="${1:?usage: find_python.sh X.Y}"

works() {
    "$1" -c "import sys; assert '%d.%d' % sys.version_info[:2] == '$want'; print(sys.executable)" 2>/dev/null
}

if found="$(command -v "python$want" 2>/dev/null)" && works "$found"; then exit 0; fi
for root in "${PYENV_ROOT:-}" "$HOME/.pyenv"; do
    [ -n "$root" ] && [ -d "$root/versions" ] || continue
    for dir in $(ls -d "$root/versions/$want".* 2>/dev/null | sort -t. -k3 -n -r); do
        works "$dir/bin/python$want" && exit 0
    done
done
for dir in /usr/local/bin /usr/bin; do
    [ -x "$dir/python$want" ] && works "$dir/python$want" && exit 0
done
echo "error: no working Python $want found (tried python$want on PATH, pyenv's versions/$want.*," \
    "/usr/local/bin, /usr/bin); install Python $want (e.g. 'pyenv install $want') and retry" >&2
exit 1
