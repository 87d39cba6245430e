#!/usr/bin/env python3
"""Print the manifest table of the library kernels: the work each does (from its problem
size), its time (ncu's duration, and CUDA events outside ncu), the achieved TFLOP/s or TB/s
computed from those and NVIDIA's published H100 SXM peaks, beside drgpu's limiter and grade.

Usage: python sample_reports/library/table.py   (from the project root; drgpu installed)
"""

import json
import lzma
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from drgpu_py.analysis import analyze  # noqa: E402
from drgpu_py.readers import open_report  # noqa: E402

# H100 SXM5 whitepaper: dense BF16/FP16 tensor 989.4 TFLOP/s at 1830 MHz, 132 SMs; TF32 half,
# FP8 double; FP32 67 TFLOP/s at 1980 MHz (256 FLOPs/SM/cycle); HBM3 3.35 TB/s.
PER_SM_CYCLE = {
    "bf16": 989.4e12 / (132 * 1.83e9),
    "fp16": 989.4e12 / (132 * 1.83e9),
    "tf32": 989.4e12 / (132 * 1.83e9) / 2,
    "fp8": 989.4e12 / (132 * 1.83e9) * 2,
    "fp32": 256.0,
}
PREC = {
    "gemm_bf16_8192": "bf16",
    "gemm_bf16_4096": "bf16",
    "gemm_fp16_2048": "fp16",
    "gemm_bf16_512": "bf16",
    "gemm_tf32_4096": "tf32",
    "gemm_fp32_4096": "fp32",
    "gemm_fp8_4096": "fp8",
    "sdpa_bf16": "bf16",
    "conv_fp16": "fp16",
}
HBM = 3.35e12


def main() -> None:
    timings = json.loads((HERE / "library_timings.json").read_text())["cases"]
    with tempfile.TemporaryDirectory() as tmp:
        rep = Path(tmp) / "library.ncu-rep"
        with lzma.open(HERE / "library.ncu-rep.xz") as src, open(rep, "wb") as dst:
            shutil.copyfileobj(src, dst)
        an = analyze(open_report(rep))
    print("| case | kernel | ncu µs | events µs | independent figure | drgpu limiter | drgpu grade | top finding |")
    print("|---|---|---|---|---|---|---|---|")
    for (name, t), ka in zip(timings.items(), an.kernels):
        sol = ka.sol
        dur = ka.kernel.duration_ns * 1e-9
        if name in PREC:
            peak = PER_SM_CYCLE[PREC[name]] * 132 * sol.sm_clock_hz
            fig = f"{t['flops'] / dur / 1e12:.0f} TFLOP/s = {100 * t['flops'] / dur / peak:.0f}% of {PREC[name]} peak at {sol.sm_clock_hz / 1e6:.0f} MHz"
        else:
            fig = f"{t['min_bytes'] / dur / 1e12:.2f} TB/s = {100 * t['min_bytes'] / dur / HBM:.0f}% of HBM3"
        top = ka.findings[0] if ka.findings else None
        tf = f"{top.id} ({top.severity}, {top.estimated_speedup:.2f}x)" if top else "none"
        print(
            f"| {name} | `{ka.kernel.name[:38]}` | {ka.kernel.duration_ns / 1000:.1f} | {t['median_us']:.1f} | {fig} | "
            f"{sol.labels.get(sol.limiter, sol.limiter)} {sol.limiter_pct:.0f}% | {sol.grade} | {tf} |"
        )


if __name__ == "__main__":
    main()
