"""Helpers the SkyWalking upload test shares between its checks."""
import collections


def read_folded(path):
    """A folded export as {stack: summed value}."""
    out = collections.Counter()
    for line in open(path):
        s, v = line.rsplit(" ", 1)
        out[s] += int(v)
    return out


def folded_key(data):
    """An onCPU/offCPU message's stacks as the folded export writes them:
    root first, user frames root..leaf, then kernel root..leaf."""
    syms = {"PROCESS_KERNEL_SPACE": [], "PROCESS_USER_SPACE": []}
    for s in data.get("stacks", []):
        syms[s.get("stackType", ["PROCESS_KERNEL_SPACE"])[0]] = s["stackSymbols"]
    return ";".join(syms["PROCESS_USER_SPACE"][::-1] + syms["PROCESS_KERNEL_SPACE"][::-1])
