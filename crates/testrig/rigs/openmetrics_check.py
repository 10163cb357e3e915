#!/usr/bin/python3
"""Parse an OpenMetrics exposition on stdin with the reference parser
(python3-prometheus-client's openmetrics.parser, which refuses anything
off the format) and print its families as JSON: [{name, type, unit,
samples: [{name, labels, value}]}]."""

import json
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families

families = [
    {
        "name": f.name,
        "type": f.type,
        "unit": f.unit,
        "samples": [{"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples],
    }
    for f in text_string_to_metric_families(sys.stdin.read())
]
print(json.dumps(families))
