"""Library kernels are recognised by their demangled and mangled names (findings.yaml
``library_kernels``), wherever a return type or namespace puts the library's name."""

from __future__ import annotations

import pytest

from drgpu_py.specs import loader as data


def _is_library(name: str) -> bool:
    return any(rx.search(name) for rx in data.library_kernel_patterns())


@pytest.mark.parametrize(
    "name",
    [
        "void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, const T1 *, T2 *)",
        "_ZN5cudnn19engines_precompiled16nchwToNhwcKernelIfffLb0ELb1EL21cudnnKernelDataType_t2EEEvNS0_18nchw2nhwc_params_tIT1_EEPKT_PT0_",
        "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0",
        "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT",
        "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x256x32_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
        "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4>(T1::Params)",
        "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false>(cublasGemvParamsEx<int, float const*, float const*, float, float>, float, float)",
        "void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, true, false, false>(cublasLt::cublasSplitKParams<float>, const T4 *, const T5 *, T5 *, const T3 *, const T3 *, const T6 *, const T4 *, T6 *, void *, long, T3 *, int *)",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<float>, std::array<char *, (unsigned long)3>>(int, T2, T3)",
        "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_",
        "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::half_t>, false, true>(Flash_fwd_params)",
        "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4>>(Flash_fwd_params)",
    ],
)
def test_library_kernels_by_any_name_form(name):
    assert _is_library(name)


@pytest.mark.parametrize(
    "name",
    [
        "void normalize_rows<(bool)0>(const float *, float *)",
        "lane_branch_kernel",
        "void my_atomic_counter(int *)",
        "triton_poi_fused_add_mul_silu_0",  # generated from the user's own Python: its lines are in the report
        "void strategy::format_cat(int)",
    ],
)
def test_user_kernels_are_not_library_kernels(name):
    assert not _is_library(name)
