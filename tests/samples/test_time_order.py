"""Time decides the order (issue 48 item 4), on multi-kernel profiles composed of real
launches: a library's helper kernel is the library's (advice about the call), a finding's
weight in the run is its kernel's share of the time x (1 - 1/estimate), and the kernel that
holds most of the time is named first even when nothing can be said about it.

The composed profile: sample_reports/launch's one-block LU step (a serial-kernel finding),
renamed as thrust's fill kernel, beside a long kernel of which the report holds only the
duration (a durations-only report's naive kernel: no finding can be made on it)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from conftest import library_analysis, shared, xz_report
from drgpu_py.analysis import analyze
from drgpu_py.analysis.findings import library_helper
from drgpu_py.analysis.saved import SavedAnalysis
from drgpu_py.profile import KernelProfile, Profile
from drgpu_py.readers import open_report
from drgpu_py.render import render
from drgpu_py.specs import loader as data
from drgpu_py.specs import output_schema

THRUST = (
    "void thrust::cuda_cub::core::_kernel_agent<thrust::cuda_cub::__fill::functor<int, long>, long>"
    "(thrust::cuda_cub::__fill::functor<int, long>, long)"
)


def _step() -> KernelProfile:
    return shared("launch-serial_steps_bad", lambda: open_report(xz_report("launch/serial_steps_bad"))).kernels[0]


def _duration_only(k: KernelProfile, kid: int, times: float) -> KernelProfile:
    """``k`` as a durations-only report holds it, ``times`` as long, under a user's name."""
    duration = k.duration_ns
    assert duration is not None
    return dataclasses.replace(
        k,
        id=kid,
        name="render(float *, int)",
        mangled="_Z6renderPfi",
        grid=(0, 0, 0),
        block=(0, 0, 0),
        metrics={"gpu__time_duration.sum": times * duration},
        metric_names={},
        strings={},
        instructions=k.instructions.iloc[0:0],
        source_text={},
        control=None,
    )


def _composed(times: float, helpers: int = 1):
    """The long kernel at ``times`` the step's duration, then ``helpers`` thrust helpers."""
    step = _step()
    kernels = [_duration_only(step, 0, times)]
    for kid in range(1, helpers + 1):
        kernels.append(
            dataclasses.replace(step, id=kid, name=THRUST, mangled="_ZN6thrust8cuda_cub4core13_kernel_agentIiEEvv")
        )
    return analyze(Profile(path="composed", format="ncu-rep", kernels=kernels))


def test_helper_kernels_of_each_library_are_named_by_their_pattern():
    names = {
        "thrust": THRUST,
        "CUB": "void cub::CUB_200200_900_NS::DeviceReduceSingleTileKernel<cub::DeviceReducePolicy<float>>(float *)",
        "Kokkos": "void Kokkos::Impl::cuda_parallel_launch_local_memory<Kokkos::Impl::ParallelFor<"
        "Kokkos::Impl::ViewFill<Kokkos::View<double *>, Kokkos::LayoutRight>, Kokkos::RangePolicy<>, Kokkos::Cuda>>()",
        "PyTorch": "void at::native::reduce_kernel<512, 1>(at::native::ReduceOp<float>)",
        "Triton": "triton_poi_fused_add_gelu_mul_0",
        "cuBLAS/cuDNN": "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT",
    }
    assert {lib for lib, _rx, _use in data.library_helpers()} == set(names)
    for lib, name in names.items():
        found = library_helper(KernelProfile(id=0, name=name))
        assert found is not None and found[0] == lib, (lib, name)
    # The user's own kernels: templated on a library's type, or run by Kokkos with the user's functor.
    for name in (
        "void reduce_rows<float, thrust::plus<float>>(float *)",
        "void Kokkos::Impl::cuda_parallel_launch_local_memory<Kokkos::Impl::ParallelFor<Stencil, "
        "Kokkos::RangePolicy<>, Kokkos::Cuda>>()",
        "naive_gemm_kernel(float *, float *, float *, int)",
    ):
        assert library_helper(KernelProfile(id=0, name=name)) is None, name


def test_a_thrust_helper_with_source_lines_gets_advice_about_the_call():
    a = _composed(200.0)
    helper = next(ka for ka in a.kernels if ka.kernel.id == 1)
    assert not helper.kernel.instructions.empty and helper.kernel.instructions["line"].gt(0).any()
    assert helper.findings and {f.audience for f in helper.findings} == {"caller"}
    serial = next(f for f in helper.findings if f.id == "serial-kernel")
    spec = next(s for s in data.findings_catalogue()["findings"] if s["id"] == "serial-kernel")
    assert serial.advice_key == "caller_advice" and serial.advice.startswith(
        spec["caller_advice"].split("{")[0].strip()
    )
    use = dict((lib, u) for lib, _rx, u in data.library_helpers())["thrust"]
    assert any(n.startswith("thrust kernel") and n.endswith(use) for n in helper.notes)
    # findings that need changes inside the kernel are left out, and said so
    assert any("findings that need changes inside it are not shown" in n for n in helper.notes)


def test_the_weight_of_a_finding_in_the_run_follows_its_kernels_share_of_the_time():
    a = _composed(200.0)
    (row,) = [r for r in a.summary() if r["kernel_id"] == 1]
    f = row["findings"][0]
    assert f["saved_share"] == pytest.approx(row["time_share"] * (1 - 1 / f["estimated_speedup"]), rel=2e-3, abs=2e-5)
    # a 23 µs helper at 0.5% of the run: low in the run whatever it is in its kernel
    assert f["application_severity"] == "low"


def test_the_kernel_holding_most_of_the_time_is_named_first_with_what_to_collect():
    a = _composed(200.0)
    assert not next(ka for ka in a.kernels if ka.kernel.id == 0).findings
    first = a.dominant()
    assert first is not None and first["kernel_id"] == 0 and first["time_share"] > 0.5
    assert "no finding was made on it" in first["why"]
    assert first["collect"] and "--set full" in first["collect"]
    doc = a.to_dict()
    assert doc["dominant"] == first
    output_schema.validate(doc, "analysis")
    # a saved analysis keeps it, and its text names it first as well
    saved = SavedAnalysis.from_dict(json.loads(json.dumps(doc)))
    assert saved.to_dict() == doc
    text = render(a, "text")
    assert text.index("Look first at render") < text.index("Fix first")


@pytest.mark.parametrize("share", [0.45, 0.55])
def test_a_kernel_is_named_first_from_dominant_share_of_the_time(share):
    # the long kernel beside two helpers (each the step's time): share = times / (times + 2)
    a = _composed(2 * share / (1 - share), helpers=2)
    top = a.summary()[0]
    assert top["kernel_id"] == 0 and top["time_share"] == pytest.approx(share, abs=1e-3)
    named = share >= data.thresholds()["dominant_share"]
    assert (a.dominant() is not None) == named
    assert ("dominant" in a.to_dict(kernels=False)) == named


def _severity_rank(sev: str) -> int:
    return ("high", "medium", "low").index(sev)


def _assert_time_decides(a) -> None:
    """The priorities follow the time saved, their severity in the run never rises down the
    list, and a group holding dominant_share of the time leads them or is named first."""
    first = a.priorities()
    saved = [f["time_saved_ns"] for f in first]
    assert saved == sorted(saved, reverse=True)
    ranks = [_severity_rank(f["application_severity"]) for f in first]
    assert ranks == sorted(ranks)
    rows = a.summary()
    top = rows[0]
    if len(rows) > 1 and top["time_share"] >= data.thresholds()["dominant_share"]:
        named = a.dominant()
        assert (first and first[0]["kernel_id"] == top["kernel_id"]) or (
            named is not None and named["kernel_id"] == top["kernel_id"]
        )


@pytest.mark.parametrize("stem", ["library", "step", "full_set"])
def test_time_decides_the_order_on_the_pytorch_reports(stem):
    """sample_reports/library: real PyTorch / cuBLAS / cuDNN / Triton launches. Every helper
    kernel of a library is the library's: its findings are advice about the call."""
    a = library_analysis(stem)
    _assert_time_decides(a)
    helpers = [ka for ka in a.kernels if library_helper(ka.kernel) is not None]
    assert helpers
    for ka in helpers:
        assert all(f.audience == "caller" for f in ka.findings), ka.kernel.name


def test_time_decides_the_order_on_a_composed_profile():
    for times in (0.5, 2.0, 200.0):
        _assert_time_decides(_composed(times, helpers=2))


def test_the_html_summary_names_the_dominant_kernel_first():
    html = render(_composed(200.0), "html")
    assert html.index("Look first</strong> at") < html.index("Fix first")
