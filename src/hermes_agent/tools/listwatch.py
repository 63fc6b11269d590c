"""Who lists a folder holding a name a tainted session chose (issue 19 item 9, prov13). readnames.py taints a
conversation whose tool result shows such a text as written; a command that shows it transformed (`ls | base64`,
`tar c . | xxd`, `find -printf %l | rev`, `git ls-files -z | od`) passes that search. What the model sees is
what counts, and no transformation can be searched for: so the LISTING itself taints, when a process other than
hermes made it. Reading a folder's entries (getdents) is a FAN_ACCESS event of the folder; fanotify (unlike
inotify) says which process made it, and an unprivileged listener is told its own pid and 0 for anybody else:
hermes's own many listings of the workspace (the run-later guard, the context watch, the sandbox's views) are
its own pid, every confined command, MCP server or background job is not.

Marks are by inode, on the folders that hold a carrier (readnames.carriers: a name, link target or xattr that can
carry a sentence) of an entry a tainted session changed. Fail closed: no fanotify here, a mark refused or a
queue overflow make the watch incomplete (readwatch: every confined call then taints). Conservative: an
unconfined child of hermes (the checkpoints' `git add -A`) listing such a folder taints too.

Cost: nothing unless such names exist; one fanotify descriptor and a mark per folder; one non-blocking read per
look."""

from __future__ import annotations

import ctypes
import os
import struct

_FAN_CLOEXEC, _FAN_NONBLOCK, _FAN_REPORT_FID = 0x1, 0x2, 0x200
_FAN_MARK_ADD, _FAN_MARK_DONT_FOLLOW, _FAN_MARK_ONLYDIR = 0x1, 0x4, 0x8
_FAN_ACCESS, _FAN_Q_OVERFLOW, _FAN_ONDIR = 0x1, 0x4000, 0x40000000
_META = struct.Struct("IBBHQii")
_INFO_FID = 1
_MAX_HANDLE = 128


class ListWatch:
    """A fanotify group over the folders holding tainted names: `listed()` says which one another process read."""

    def __init__(self) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._libc.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int,
                                             ctypes.c_char_p]
        self.fd = self._libc.fanotify_init(_FAN_CLOEXEC | _FAN_NONBLOCK | _FAN_REPORT_FID, os.O_RDONLY)
        self.problem = "" if self.fd >= 0 else \
            f"the kernel gave no fanotify descriptor ({os.strerror(ctypes.get_errno())})"
        self.handles: dict[bytes, str] = {}
        self.marked: set[str] = set()

    def mark(self, folder: str) -> None:
        if self.fd < 0 or folder in self.marked:
            return
        self.marked.add(folder)
        flags = _FAN_MARK_ADD | _FAN_MARK_DONT_FOLLOW | _FAN_MARK_ONLYDIR
        if self._libc.fanotify_mark(self.fd, flags, _FAN_ACCESS | _FAN_ONDIR, -100, os.fsencode(folder)) != 0:
            code = ctypes.get_errno()
            if code not in (2, 20) and not self.problem:  # ENOENT, ENOTDIR: gone since the walk saw it
                self.problem = f"the kernel refused to watch listings of {folder} ({os.strerror(code)})"
            return
        handle = self._handle(folder)
        if handle:
            self.handles[handle] = folder

    def _handle(self, folder: str) -> bytes:
        """The folder's file handle as fanotify reports it (type and bytes), b"" when it has none."""
        buf = ctypes.create_string_buffer(8 + _MAX_HANDLE)
        struct.pack_into("Ii", buf, 0, _MAX_HANDLE, 0)
        mount = ctypes.c_int()
        if self._libc.name_to_handle_at(-100, os.fsencode(folder), buf, ctypes.byref(mount), 0) != 0:
            return b""
        size, kind = struct.unpack_from("Ii", buf.raw, 0)
        return struct.pack("i", kind) + buf.raw[8:8 + size]

    def listed(self) -> str:
        """The folder another process listed since the last look ("" when none); drains the queue."""
        if self.fd < 0:
            return ""
        found, me = "", os.getpid()
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            pos = 0
            while pos + _META.size <= len(data):
                size, _v, _r, meta, mask, _fd, pid = _META.unpack_from(data, pos)
                if mask & _FAN_Q_OVERFLOW:
                    found = found or "more folder listings than hermes could follow"
                elif pid != me and not found:
                    found = self._folder(data[pos + meta:pos + size]) or "a folder"
                pos += max(size, _META.size)
        return found

    def _folder(self, info: bytes) -> str:
        if len(info) < 20 or info[0] != _INFO_FID:
            return ""
        size, kind = struct.unpack_from("Ii", info, 12)
        return self.handles.get(struct.pack("i", kind) + info[20:20 + size], "")

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
