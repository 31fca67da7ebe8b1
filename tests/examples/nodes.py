#!/usr/bin/env python3
"""Runs examples/fashion_mnist in process with virtual nodes (--nodes, --node-sizes): one epoch on
the first 8,000 examples, 4 ranks. A co-located synchronous parameter server on --nodes 2 must
aggregate by node by default (--ps-aggregate automatic), on --node-sizes 3,1 with --ps-aggregate
rank per rank, and on one node (no option) per rank; an all-reduce on --nodes 2 (its automatic
algorithm, the hierarchical one). Each summary must record the grouping (node_sizes: [2, 2],
[3, 1], null) and how the pushes were aggregated, and each run must learn (above 60% after one
epoch; chance is 10%).

    nodes.py FASHION_MNIST
"""
import json
import os
import subprocess
import sys
import tempfile

binary = sys.argv[1]
common = ["--ranks", "4", "--epochs", "1", "--batch", "50", "--train-limit", "8000", "--quiet"]
ps = ["--strategy", "ps", "--servers", "colocated", "--consistency", "sync"]
runs = [
    (["--nodes", "2"] + ps, [2, 2], "node"),
    (["--node-sizes", "3,1", "--ps-aggregate", "rank"] + ps, [3, 1], "rank"),
    (ps, None, "rank"),
    (["--nodes", "2", "--strategy", "allreduce"], [2, 2], None),
]
problems = []
with tempfile.TemporaryDirectory() as work:
    for k, (options, sizes, aggregated) in enumerate(runs):
        summary = os.path.join(work, f"{k}.json")
        command = [binary] + common + options + ["--summary", summary]
        print("+", " ".join(command), flush=True)
        subprocess.run(command, check=True)
        record = json.load(open(summary))
        print(record["node_sizes"], record["ps_aggregated_by"], record["test_accuracy"])
        if record["node_sizes"] != sizes:
            problems.append(f"{options}: node_sizes {record['node_sizes']}, expected {sizes}")
        if record["ps_aggregated_by"] != aggregated:
            problems.append(f"{options}: ps_aggregated_by {record['ps_aggregated_by']}, expected {aggregated}")
        if record["test_accuracy"] <= 0.6:
            problems.append(f"{options}: test accuracy {record['test_accuracy']}")
for problem in problems:
    print("FAILED:", problem)
sys.exit(1 if problems else 0)
