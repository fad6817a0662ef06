#!/usr/bin/env python3
"""Rewrites two scheduling hints of the promotion's FFMAs in compiled step-14 kernels, in place.

Every SASS instruction on sm_90 is 16 bytes; the top 23 bits hold the control code ptxas
chose: stall cycles, a yield bit, scoreboards, and four operand-reuse bits. In a run of the
promotion's FMAs ptxas alternates two forms: an FMA that keeps its scale in the operand reuse
cache (reuse bit set, yield bit set: the warp must not be switched out, or the cache would be
lost), and one that reads it from the register file (neither bit set). Whether the warp
scheduler may switch to another warp after an instruction decides whether the other consumer
can issue its wgmma between the FMAs. DeepGEMM reports 10% and more for its block-scaled FP8
kernels from letting more of these FMAs yield (its README, "FFMA SASS interleaving").

Usage: yield-bits.py MODE CUBIN... with MODE
  yield  every FMA yields and keeps nothing in the reuse cache;
  hold   every FMA keeps the warp (reuse bits as ptxas set them);
  count  change nothing, print the count.
Every register-form FFMA of the kernel `sgemm` is rewritten: the promotion's, and the few of the
epilogue (with block scales ptxas schedules the promotion's between other instructions, so a
run of FMAs does not delimit it). The hints
change no result: a cleared reuse bit makes the FMA read its register again, and the yield bit
only lets the scheduler choose. For experiments through SGEMM_CUBIN_CACHE (the harness loads a
cached CUBIN as it finds it): fill the cache with a run, rewrite, run again.
"""
import struct
import sys

YIELD = 1 << 45  # in the instruction's high 64 bits (bit 109 of 128): set = do not yield
REUSE = 0xF << 58  # bits 122-125: one reuse flag per source operand
FFMA_RRR = 0x223  # the low 12 bits of FFMA Rd, Ra, Rb, Rc


def text_section(elf, name):
    shoff, = struct.unpack_from('<Q', elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', elf, 0x3A)
    def header(i):
        name_off, = struct.unpack_from('<I', elf, shoff + i * shentsize)
        off, size = struct.unpack_from('<QQ', elf, shoff + i * shentsize + 0x18)
        return name_off, off, size
    _, strtab, _ = header(shstrndx)
    for i in range(shnum):
        name_off, off, size = header(i)
        end = elf.index(b'\0', strtab + name_off)
        if elf[strtab + name_off:end].decode() == name:
            return off, size
    return None


def ffmas(elf, off, size):
    """The indices of the register-form FFMAs of a section."""
    return [i for i in range(size // 16) if struct.unpack_from('<Q', elf, off + 16 * i)[0] & 0xFFF == FFMA_RRR]


def main():
    mode, files = sys.argv[1], sys.argv[2:]
    assert mode in ('yield', 'hold', 'count'), __doc__
    for path in files:
        elf = bytearray(open(path, 'rb').read())
        text = text_section(elf, '.text.sgemm')
        if text is None:
            print(f'{path}: no kernel sgemm, left alone')
            continue
        off, size = text
        found, changed = ffmas(elf, off, size), 0
        for i in found:
            at = off + 16 * i + 8
            high, = struct.unpack_from('<Q', elf, at)
            new = high & ~(YIELD | REUSE) if mode == 'yield' else high | YIELD if mode == 'hold' else high
            changed += new != high
            struct.pack_into('<Q', elf, at, new)
        held = sum(bool(struct.unpack_from('<Q', elf, off + 16 * i + 8)[0] & YIELD) for i in found)
        print(f'{path}: {len(found)} FFMAs, {changed} changed, {held} now keep the warp')
        if mode != 'count':
            open(path, 'wb').write(elf)


if __name__ == '__main__':
    main()
