#!/usr/bin/env python3
"""Decodes a schedplay .pftrace with Perfetto's own schema (the `perfetto` package's
perfetto_trace_pb2) and checks it: every packet parses, ftrace bundles hold the scheduling events,
compact_sched columns have equal lengths, timestamps never go backwards within a CPU, and the
counts match the ones given (sched_switch=N ...). Prints the counts as JSON.

usage: perfetto-check.py FILE.pftrace [sched_switch=N] [sched_waking=N] ...
"""
import json
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb


def main():
    path = sys.argv[1]
    want = dict(a.split("=", 1) for a in sys.argv[2:])
    trace = pb.Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())
    counts = {k: 0 for k in ("sched_switch", "sched_waking", "sched_wakeup_new",
                             "sched_migrate_task", "cpu_idle", "track_event",
                             "track_descriptor", "threads", "processes")}
    last_switch = {}
    errors = []
    for p in trace.packet:
        if p.HasField("process_tree"):
            counts["threads"] += len(p.process_tree.threads)
            counts["processes"] += len(p.process_tree.processes)
        if p.HasField("track_descriptor"):
            counts["track_descriptor"] += 1
        if p.HasField("track_event"):
            counts["track_event"] += 1
        if p.HasField("ftrace_events"):
            b = p.ftrace_events
            cs = b.compact_sched
            n = len(cs.switch_timestamp)
            cols = [cs.switch_prev_state, cs.switch_next_pid, cs.switch_next_prio,
                    cs.switch_next_comm_index]
            if any(len(c) != n for c in cols):
                errors.append(f"cpu {b.cpu}: compact switch columns differ in length")
            t = 0
            for d in cs.switch_timestamp:
                t += d
                if t < last_switch.get(b.cpu, 0):
                    errors.append(f"cpu {b.cpu}: sched_switch at {t} before {last_switch[b.cpu]}")
                last_switch[b.cpu] = t
            for i in cs.switch_next_comm_index:
                if i >= len(cs.intern_table):
                    errors.append(f"cpu {b.cpu}: comm index {i} outside the intern table")
            counts["sched_switch"] += n
            counts["sched_waking"] += len(cs.waking_timestamp)
            for e in b.event:
                for k in ("sched_wakeup_new", "sched_migrate_task", "cpu_idle"):
                    if e.HasField(k):
                        counts[k] += 1
    for k, v in want.items():
        if counts.get(k) != int(v):
            errors.append(f"{k}: {counts.get(k)} in the trace, {v} expected")
    print(json.dumps(counts))
    if errors:
        for e in errors[:20]:
            print("error:", e, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
