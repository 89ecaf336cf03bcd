#!/usr/bin/env python3
"""Prints the goroutine timeline of a Go runtime trace, one line per state
transition or system call, with each event's time in microseconds from T0
(ns, on the trace's clock) and its first frames outside the runtime.

    go tool trace -d=parsed trace.out > parsed.txt
    bench/trace-timeline.py parsed.txt [T0 [MAX_LINES]]

docs/commitlog.md ("A lone durable write, stage by stage") reads one
write's path with it.
"""
import re,sys
evs=[]; cur=None
for line in open(sys.argv[1]):
    if line.startswith('M='):
        if cur: evs.append(cur)
        m=re.match(r'M=(\S+) P=(\S+) G=(\S+) (\S+) Time=(\d+)(.*)',line)
        cur={'M':m[1],'P':m[2],'G':m[3],'kind':m[4],'t':int(m[5]),'rest':m[6].strip(),'stack':[]}
    elif cur is not None and line.startswith('\t') and not line.startswith('\t\t'):
        fn=line.strip().split(' @ ')[0]
        cur['stack'].append(fn)
if cur: evs.append(cur)
evs.sort(key=lambda e:e['t'])
t0=int(sys.argv[2]) if len(sys.argv)>2 else 0
n=int(sys.argv[3]) if len(sys.argv)>3 else 100000
def short(s):
    s=s.replace('github.com/cqld/cqld/','').replace('github.com/panjf2000/gnet/v2/','gnet/').replace('github.com/gocql/gocql.','gocql.')
    return s
cnt=0
for e in evs:
    if e['t']<t0 or e['kind'] in ('Metric','Label','RangeBegin','RangeEnd','Sync','Log','Experimental'): continue
    st=[short(s) for s in e['stack'] if not s.startswith('runtime.') and not s.startswith('internal/') and not s.startswith('syscall.')][:3]
    print(f"{(e['t']-t0)/1000:10.1f}us P={e['P']:>2} G={e['G']:>5} {e['kind']} {e['rest'][:70]} | {' < '.join(st)}")
    cnt+=1
    if cnt>=n: break
