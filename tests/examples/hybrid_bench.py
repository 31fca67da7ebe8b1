#!/usr/bin/env python3
"""Runs examples/allreduce_bench in its hybrid mode under mpiexec (--threads-per-node: each process
runs its ranks as threads, transport::hybrid) on a short sweep, at 2 processes x 2 threads and
3 processes x 1 thread and 1 process x 3 threads, and checks what it reports: the table names the
processes and threads, and the JSON file has one record per algorithm (ring, recursive_doubling,
automatic, hierarchical; no native or mpi_raw, which the hybrid transport lacks) and size, each
for the whole world (processes x threads ranks), with a minimum <= median <= maximum, calls per
trial >= 1 and a bus bandwidth of 2(n-1)/n times the algorithm bandwidth. The benchmark checks
each algorithm's sum on every element before it times it, so a wrong all-reduce fails the run.

    hybrid_bench.py ALLREDUCE_BENCH MPIEXEC
"""
import json
import os
import subprocess
import sys
import tempfile

bench, mpiexec = sys.argv[1], sys.argv[2]
algorithms = {"ring", "recursive_doubling", "automatic", "hierarchical"}
sizes = [4, 64 << 10, 1 << 20]  # --quick
problems = []
with tempfile.TemporaryDirectory() as work:
    for processes, threads in [(2, 2), (3, 1), (1, 3)]:
        out = os.path.join(work, f"{processes}x{threads}.json")
        command = [mpiexec, "--oversubscribe", "--bind-to", "none", "-n", str(processes), bench,
                   "--threads-per-node", str(threads), "--oversubscribe-threads", "--quick", "--json", out]
        print("+", " ".join(command), flush=True)
        run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=240)
        print(run.stdout)
        where = f"{processes} x {threads}"
        if run.returncode != 0:
            problems.append(f"{where}: exit status {run.returncode}")
            continue
        ranks = processes * threads
        header = f"hybrid transport, {ranks} ranks: {processes} processes x {threads} threads"
        if header not in run.stdout:
            problems.append(f"{where}: the table's title lacks '{header}'")
        records = json.load(open(out))
        seen = {(r["algorithm"], r["bytes"]) for r in records}
        expected = {(a, b) for a in algorithms for b in sizes}
        if seen != expected or len(records) != len(expected):
            problems.append(f"{where}: records for {sorted(seen)}, expected {sorted(expected)}")
        for r in records:
            what = f"{where}, {r['algorithm']} at {r['bytes']} B"
            if r["transport"] != "hybrid" or r["ranks"] != ranks:
                problems.append(f"{what}: transport {r['transport']} on {r['ranks']} ranks")
            if not 0 < r["min_s"] <= r["median_s"] <= r["max_s"]:
                problems.append(f"{what}: min {r['min_s']}, median {r['median_s']}, max {r['max_s']}")
            if r["calls_per_trial"] < 1:
                problems.append(f"{what}: {r['calls_per_trial']} calls per trial")
            if abs(r["algbw_gbps"] - r["bytes"] / r["median_s"] / 1e9) > 1e-9 * max(1.0, r["algbw_gbps"]):
                problems.append(f"{what}: algorithm bandwidth {r['algbw_gbps']} is not bytes / median")
            factor = 2 * (ranks - 1) / ranks
            if abs(r["busbw_gbps"] - factor * r["algbw_gbps"]) > 1e-9 * max(1.0, r["busbw_gbps"]):
                problems.append(f"{what}: bus bandwidth {r['busbw_gbps']} is not {factor} x {r['algbw_gbps']}")
for problem in problems:
    print("FAILED:", problem)
sys.exit(1 if problems else 0)
