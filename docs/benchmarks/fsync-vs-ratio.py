#!/usr/bin/env python3
"""Does a cell of adaptive against batch flap with the disk?

Reads the output of one or more `bench/peers.sh` rounds (each preceded by a
line "##### round N") and, for every client count and client whose round
has both modes, sets adaptive's ops/s over batch's beside the ratio of the
two cells' mean fdatasync. Prints the pairs, the correlation of their
logarithms, a least-squares line (its intercept is adaptive over batch at
equal fsync), and the median ratio where the two disks were within 10%.

    python3 docs/benchmarks/fsync-vs-ratio.py PEERS-OUTPUT
"""
import math
import re
import statistics as st
import sys

CELL = re.compile(r'cqld (\w+)\s+(\w+)\s+(\d+) clients:\s+(\d+) ops/s, .*?'
                  r'([\d.]+) appends/sync, fsync mean (\d+) us')


def cells(path):
    rnd, out = -1, {}
    for line in open(path):
        if line.startswith('##### round'):
            rnd += 1
            continue
        m = CELL.match(line)
        if m and rnd >= 0:
            out[(rnd, m[1], m[2], int(m[3]))] = (int(m[4]), int(m[6]))
    return out


def main(path):
    c = cells(path)
    xs, ys = [], []
    for (rnd, mode, client, n), (ops, fsync) in sorted(c.items(), key=lambda kv: (kv[0][2], kv[0][3], kv[0][0])):
        if mode != 'adaptive' or (rnd, 'batch', client, n) not in c:
            continue
        bops, bfsync = c[(rnd, 'batch', client, n)]
        print(f'{client:5} {n:4} round {rnd}: ops {ops / bops:.2f}  fsync {fsync}/{bfsync} us ({fsync / bfsync:.2f})')
        xs.append(math.log(fsync / bfsync))
        ys.append(math.log(ops / bops))
    if len(xs) < 3:
        return
    line = st.linear_regression(xs, ys)
    print(f'{len(xs)} pairs; correlation of log ratios {st.correlation(xs, ys):.2f}; '
          f'ops ratio = {math.exp(line.intercept):.3f} x fsync ratio^{line.slope:.2f}')
    near = [y for x, y in zip(xs, ys) if abs(x) < math.log(1.1)]
    if near:
        print(f'fsyncs within 10%: {len(near)} pairs, ops ratio median {math.exp(st.median(near)):.2f}, '
              f'min {math.exp(min(near)):.2f}, max {math.exp(max(near)):.2f}')


if __name__ == '__main__':
    main(sys.argv[1])
