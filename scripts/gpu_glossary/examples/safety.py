"""What an example may not do on the shared GPU machines: turn NVLink multicast back on (it can
put a host's GPUs out of service for everyone) or change a GPU's settings.

The runner sets the variables of `MULTICAST_OFF` for every example; an example may set them
alike, never otherwise, and may not unset them. The check reads the code (comments removed)
for that, for the CUDA driver's multicast calls, NVML's setters and `nvidia-smi` options that
change clocks, power, persistence, compute mode, ECC or MIG. It guards against mistakes; it
is no sandbox.
"""

from __future__ import annotations

import re

MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
_MULTICAST_SETTING = re.compile(r"\b(" + "|".join(MULTICAST_OFF) + r")\b")
_ASSIGNED = re.compile(r"""^["'\]\s]*=(?!=)\s*["']?([^"'\s,)\]]*)""")  # NAME=v, ["NAME"] = "v"
_SET_CALL = re.compile(r"""(?:setenv|putenv|setdefault)\(\s*["']?$""")  # setenv("NAME", "v")
_CALL_VALUE = re.compile(r"""^["']?\s*,\s*["']?([^"'\s,)]*)""")
_UNSETS = re.compile(r"(?:\bdel\b|\bunset(?:env)?\b|\.pop\(|\s-u\s*|--unset[= ]\s*)[^\n]*$")
_UNSAFE_NAMES = re.compile(r"\b(?:cuMulticast\w*|nvmlDevice(?:Set|Reset|Clear)\w*|nvmlGpuInstance\w*Create\w*)\b")
_SMI_SETTERS = {
    *("-pm", "--persistence-mode", "-c", "--compute-mode", "-e", "--ecc-config", "-r", "--gpu-reset"),
    *("-lgc", "--lock-gpu-clocks", "-rgc", "--reset-gpu-clocks", "-lmc", "--lock-memory-clocks"),
    *("-rmc", "--reset-memory-clocks", "-ac", "--applications-clocks", "-rac", "--reset-applications-clocks"),
    *("-pl", "--power-limit", "-mig", "--multi-instance-gpu", "-cgi", "-cci", "-dgi", "-dci"),
}
_SMI_READERS = {"dmon", "pmon", "topo", "nvlink", "c2c"}  # subcommands whose -c is a count, not a setting


def unsafe_call(code: str) -> str | None:
    """The first call in `code` that would change a GPU's settings or NVLink multicast, if any."""
    found = _UNSAFE_NAMES.search(code)
    if found:
        return found.group(0)
    for setting in _MULTICAST_SETTING.finditer(code):
        line_start = code.rfind("\n", 0, setting.start()) + 1
        line_end = code.find("\n", setting.end())
        line_end = len(code) if line_end < 0 else line_end
        before, after = code[line_start : setting.start()], code[setting.end() : line_end]
        assigned = _ASSIGNED.match(after) or (_CALL_VALUE.match(after) if _SET_CALL.search(before) else None)
        if _UNSETS.search(before) or (assigned and assigned.group(1) != MULTICAST_OFF[setting.group(1)]):
            return code[line_start:line_end].strip()
    for call in re.finditer(r"nvidia-smi\b([^\n;|&]*)", code):
        words = [w.strip("\"',[]()") for w in call.group(1).replace("=", " ").split()]
        words = [w for w in words if w]
        if words and words[0] in _SMI_READERS:
            continue
        setter = next((w for w in words if w in _SMI_SETTERS), None)
        if setter:
            return f"nvidia-smi {setter}"
    return None
