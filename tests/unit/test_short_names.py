"""Kernel names on screen (drgpu_py.profile.short_names): within the width, different for
different names, and keeping what tells apart the template instances of one function (the
functor, the dtype) rather than cutting it out of the middle. Names are spelled as ncu
demangles PyTorch's kernels (sample_reports/library/step.ncu-rep holds the first four)."""

from __future__ import annotations

import random

import pytest

from html import escape

from drgpu_py.profile import CUT, short_name, short_names

ELEMENTWISE = "void at::native::vectorized_elementwise_kernel<(int){n}, {functor}, std::array<char *, (unsigned long){arity}>>(int, T2, T3)"
ADD = ELEMENTWISE.format(n=8, functor="at::native::CUDAFunctor_add<c10::BFloat16>", arity=3)
LAMBDA = (
    "at::native::<unnamed>::{fn}(at::TensorIteratorBase &, c10::Scalar)::[lambda() (instance 1)]::operator ()() "
    "const::[lambda() (instance 8)]::operator ()() const::[lambda({dtype}) (instance 1)]"
)
CLAMP_HALF = ELEMENTWISE.format(n=8, functor=LAMBDA.format(fn="launch_clamp_scalar", dtype="c10::Half"), arity=2)
CLAMP_FLOAT = ELEMENTWISE.format(n=8, functor=LAMBDA.format(fn="launch_clamp_scalar", dtype="float"), arity=2)
INVSTD = ELEMENTWISE.format(n=4, functor=LAMBDA.format(fn="batch_norm_calc_invstd", dtype="c10::Half"), arity=2)
LAYER_NORM = "void at::native::<unnamed>::vectorized_layer_norm_kernel<{t}, float, (bool)0>(int, T2, const T1 *, T2 *)"
STEP_LIKE = [ADD, CLAMP_HALF, CLAMP_FLOAT, INVSTD, LAYER_NORM.format(t="float"), LAYER_NORM.format(t="c10::BFloat16")]


@pytest.mark.parametrize("width", [24, 30, 40, 60, 80])
def test_different_names_get_different_forms_within_the_width(width):
    short = short_names(STEP_LIKE, width)
    assert len(set(short.values())) == len(STEP_LIKE), short
    assert all(len(s) <= width for s in short.values()), short


def test_the_telling_template_arguments_are_kept():
    short = short_names(STEP_LIKE, 80)
    assert "CUDAFunctor_add<BFloat16>" in short[ADD]
    assert "launch_clamp_scalar::lambda(Half)" in short[CLAMP_HALF]
    assert "launch_clamp_scalar::lambda(float)" in short[CLAMP_FLOAT]
    assert "batch_norm_calc_invstd" in short[INVSTD]
    assert short[LAYER_NORM.format(t="float")].endswith("vectorized_layer_norm_kernel<float, …>")
    assert short[LAYER_NORM.format(t="c10::BFloat16")].endswith("vectorized_layer_norm_kernel<BFloat16, …>")
    # What all of them share is left out: the common arity and namespaces of the arguments.
    assert "unsigned long" not in "".join(short.values()) and "c10::" not in "".join(short.values())


def test_a_name_alone_keeps_its_first_form():
    assert short_name("void poly_chain<(int)64>(int, const float *, float *)") == "poly_chain<(int)64>"
    assert short_name(ADD, 80) == f"at::native::vectorized_elementwise_kernel<{CUT}>"
    assert short_name("(anonymous namespace)::k(int)") == "k"
    assert short_name("triton_poi_fused_add_mul_silu_0") == "triton_poi_fused_add_mul_silu_0"
    assert short_names([ADD, ADD], 40) == {ADD: short_name(ADD, 40)}  # equal names share a form


def test_a_long_form_loses_namespaces_then_the_middle_of_the_function_name():
    name = "void at::native::<unnamed>::cunn_SoftMaxForward<4, float>(float *)"
    assert short_name(name, 60) == "at::native::cunn_SoftMaxForward<4, float>"
    assert short_name(name, 40) == "native::cunn_SoftMaxForward<4, float>"
    assert short_name(name, 34) == "cunn_SoftMaxForward<4, float>"
    assert short_name(name, 20) == "cunn_SoftM…4, float>"  # the arguments alone nearly fill it
    cut = short_name("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT", 30)
    assert len(cut) == 30 and cut.startswith("nvjet_sm90_tst") and cut.endswith("coopA_bias_TNT") and CUT in cut


def test_overloads_and_names_alike_in_every_form_still_differ():
    short = short_names(["void f(int)", "void f(float)", "ns::f(int)"], 20)
    assert len(set(short.values())) == 3
    same_ends = ["k" + "x" * 80 + c + "y" * 80 for c in "abc"]
    short = short_names(same_ends, 12)
    assert len(set(short.values())) == 3 and all(len(s) <= 12 for s in short.values())


@pytest.mark.parametrize("seed", range(10))
def test_random_names_differ_and_fit(seed):
    rnd = random.Random(seed)
    parts = ["at::native::", "void ", "<unnamed>::", "k", "_kernel", "<(int)4>", "<float, ", "half>", "(int)", "x" * 40]
    names = sorted({"".join(rnd.choice(parts) for _ in range(rnd.randint(1, 6))) for _ in range(30)})
    width = rnd.choice([12, 20, 40, 60])
    short = short_names(names, width)
    assert set(short) == set(names)
    assert len(set(short.values())) == len(names)
    assert all(0 < len(s) <= width for s in short.values())


@pytest.mark.parametrize(
    "name",
    [
        "a::" * 20000 + "k(int)",  # scopes dropped one by one were 245 s of string building
        "f<" + ", ".join(["abcdefghijkl"] * 3000) + ">(int)",
        "<" * 20000 + "x" + ">" * 20000,
        "x" * 1_000_000,
    ],
)
def test_hostile_names_differ_and_fit(name):
    """Names of a hostile export (a CSV cell can hold megabytes): read from their two ends,
    still told apart."""
    short = short_names([name, name + "y", "y" + name], 40)
    assert len(set(short.values())) == 3 and all(len(s) <= 40 for s in short.values())


def test_the_notebook_table_keeps_different_kernels_apart():
    """Analysis._repr_html_'s table: the step's kernels under names as different as the
    terminal's (issue 46: three layer-norm and four elementwise kernels read alike)."""
    from drgpu_py.analysis.display import NAME_WIDTH, analysis_html

    rows = [
        {"name": n, "kernel_id": i, "launches": 1, "total_ns": 1000.0, "time_share": 0.1, "findings": []}
        for i, n in enumerate(STEP_LIKE)
    ]
    html = analysis_html("step.ncu-rep", rows)
    for short in short_names(STEP_LIKE, NAME_WIDTH).values():
        assert f"<td>{escape(short)}</td>" in html, short
