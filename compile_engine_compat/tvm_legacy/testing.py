"""The ``tvm.testing`` names of TVM <=0.19 that TVM 0.27 dropped, served by ``install()``.

Upstream-style Relay test suites decorate their tests with ``tvm.testing.uses_gpu``,
``requires_cuda``, ``requires_x86_vnni``, ..., build correlated parameters with
``tvm.testing.parameters`` and run over targets with ``parametrize_targets`` or the ``target`` /
``dev`` fixtures. TVM 0.27 keeps ``parameter``, ``fixture``, ``enabled_targets``,
``device_enabled``, ``skip_if_32bit`` and ``assert_allclose``; this module adds the rest, and
``install()`` sets each on ``tvm.testing`` where TVM lacks it (the ``"tvm.testing:*"`` row of
:data:`compile_engine_compat.surfaces.moved_names.MOVED_NAMES`).

A requirement (:class:`Requirement`) is checked on this machine when a test is decorated: a test
that needs a GPU, a CUDA device or a CPU feature the host lacks is skipped with the reason, CPU
tests run. The ``target`` / ``dev`` fixtures and the parametrization behind ``parameters`` live
in the pytest plugin :mod:`compile_engine_compat.tvm_legacy.testing_plugin`
(``tvm.testing.plugin``), which ``install()`` enables in a pytest session.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import itertools
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import tvm

from compile_engine_compat.tvm_legacy import testing_ffi
from compile_engine_compat.tvm_legacy.testing_ffi import *  # noqa: F403 (set on tvm.testing too)

#: The TVM 0.19 names ``install()`` sets on ``tvm.testing`` (where TVM 0.27 lacks them); the
#: plugin's helpers (:data:`REQUIREMENTS`, :func:`test_targets`, ...) are not among them.
__all__ = [
    "Feature",
    "disable_span_filling",
    "enable_span_filling",
    "exclude_targets",
    "get_dtype_range",
    "known_failing_targets",
    "parameters",
    "parametrize_targets",
    "requires_aarch64",
    "requires_aarch64_sme",
    "requires_aarch64_sve",
    "requires_aprofile_aem_fvp",
    "requires_arm_dot",
    "requires_arm_fp16",
    "requires_cascadelake",
    "requires_cublas",
    "requires_cuda",
    "requires_cuda_compute_version",
    "requires_cudagraph",
    "requires_cudnn",
    "requires_cutlass",
    "requires_gpu",
    "requires_hexagon",
    "requires_hipblas",
    "requires_libtorch",
    "requires_llvm",
    "requires_matrixcore",
    "requires_metal",
    "requires_mrvl",
    "requires_multi_gpu",
    "requires_nccl",
    "requires_nnapi",
    "requires_nvcc_version",
    "requires_nvptx",
    "requires_opencl",
    "requires_openclml",
    "requires_package",
    "requires_rocm",
    "requires_rpc",
    "requires_skylake_avx512",
    "requires_tensorcore",
    "requires_vitis_ai",
    "requires_vulkan",
    "requires_x86",
    "requires_x86_amx",
    "requires_x86_avx512",
    "requires_x86_vnni",
    "skip_if_no_reference_system",
    "skip_parameterizations",
    "uses_gpu",
    "uses_multi_gpu",
    "xfail_parameterizations",
]
# TVM 0.19's FFI and pool helpers (their own module): set on tvm.testing with the rest.
__all__ += testing_ffi.__all__

#: The targets a ``target`` test runs over when ``TVM_TEST_TARGETS`` is unset (TVM 0.19's list):
#: those this machine cannot run are kept and skipped, naming what they need.
DEFAULT_TARGETS: tuple[str, ...] = (
    "llvm",
    "cuda",
    "nvptx",
    "vulkan -from_device=0",
    "opencl",
    "metal",
    "rocm",
)


def target_kind(target: Any) -> str:
    """The kind of a target given as a string (``"llvm -mcpu=x"``), a dict or a Target."""
    if isinstance(target, dict):
        return str(target["kind"])
    if hasattr(target, "kind"):
        return str(target.kind.name)
    return str(target).split()[0] if str(target).split() else ""


def test_targets() -> list[str]:
    """The targets a ``target`` test runs over: ``TVM_TEST_TARGETS`` (``;``-separated) or
    :data:`DEFAULT_TARGETS`."""
    text = os.environ.get("TVM_TEST_TARGETS", "").strip()
    if not text:
        return list(DEFAULT_TARGETS)
    return list(dict.fromkeys(t.strip() for t in text.split(";") if t.strip()))


test_targets.__test__ = False  # type: ignore[attr-defined]  # not a test, despite its name


# -- what this machine has ----------------------------------------------------------------------


#: Target kinds whose device has another name (TVM 0.19's ``tvm.device("llvm")``).
DEVICE_OF_KIND = {"llvm": "cpu", "c": "cpu", "nvptx": "cuda"}


def device_of(target: Any, index: int = 0) -> Any:
    """The device a target (string, dict or Target) runs on: the CPU for ``llvm``."""
    kind = target_kind(target)
    return tvm.device(DEVICE_OF_KIND.get(kind, kind), index)


@functools.cache
def _device_exists(kind: str) -> bool:
    try:
        return bool(tvm.runtime.enabled(kind)) and bool(device_of(kind).exist)
    except Exception:  # a device API TVM was built without raises rather than answering
        return False


_GPU_KINDS = ("cuda", "rocm", "vulkan", "opencl", "metal")


def _no_device(kind: str, long_name: str) -> Callable[[], str | None]:
    def check() -> str | None:
        if not tvm.runtime.enabled(kind):
            return f"{long_name}: this TVM build has no {kind} support"
        if not _device_exists(kind):
            return f"{long_name}: no {kind} device on this machine"
        return None

    return check


def _no_gpu() -> str | None:
    return None if any(_device_exists(k) for k in _GPU_KINDS) else "no GPU on this machine"


def _fewer_than_two_gpus() -> str | None:
    for kind in _GPU_KINDS:
        try:
            if _device_exists(kind) and device_of(kind, 1).exist:
                return None
        except Exception:
            continue
    return "fewer than two GPUs on this machine"


@functools.cache
def _host_has(features: tuple[str, ...]) -> bool:
    from tvm.target import codegen

    try:
        host = tvm.target.Target(
            {
                "kind": "llvm",
                "mtriple": codegen.llvm_get_system_triple(),
                "mcpu": codegen.llvm_get_system_cpu(),
            }
        )
        return all(bool(codegen.target_has_features(f, host)) for f in features)
    except Exception:  # an LLVM that does not know the feature names: the host lacks them
        return False


def _cpu_features(long_name: str, *alternatives: tuple[str, ...]) -> Callable[[], str | None]:
    def check() -> str | None:
        if any(_host_has(features) for features in alternatives):
            return None
        wanted = " or ".join("+".join(f) for f in alternatives)
        return f"{long_name}: this CPU lacks {wanted}"

    return check


def _host_arch(long_name: str, prefixes: tuple[str, ...]) -> Callable[[], str | None]:
    def check() -> str | None:
        from tvm.target import codegen

        triple = str(codegen.llvm_get_system_triple())
        return None if triple.startswith(prefixes) else f"{long_name}: the host is {triple}"

    return check


def _library(flag: str, long_name: str, parent: str) -> Callable[[], str | None]:
    def check() -> str | None:
        value = str(tvm.support.libinfo().get(flag, "OFF")).lower()
        if value in {"off", "false", "0", ""}:
            return f"{long_name}: this TVM build has {flag}=OFF"
        return REQUIREMENTS[parent].missing() if parent else None

    return check


@dataclass
class Requirement:
    """One ``tvm.testing.requires_*`` decorator: a pytest mark, and a skip when it is missing.

    ``@requires_cuda`` marks the test ``cuda`` and skips it, naming why, where this machine has
    no CUDA device; ``requires_gpu(support_required="optional")`` (``uses_gpu``) only marks it,
    so the test also runs on the CPU, as in TVM 0.19.

    Attributes
    ----------
    name : str
        The pytest mark (``"gpu"``, ``"x86_vnni"``).
    long_name : str
        What the reason of a skip calls it.
    check : callable
        Returns why the requirement is missing on this machine, or None when it is met.
    parents : tuple of str
        Requirements this one implies (``cudnn`` needs ``cuda``).
    """

    name: str
    long_name: str
    check: Callable[[], str | None]
    parents: tuple[str, ...] = ()
    _missing: list[str | None] = field(default_factory=list, repr=False)

    def missing(self) -> str | None:
        """Why the requirement is not met here (checked once), or None."""
        if not self._missing:
            # Its own reason first ("CUDA: no cuda device"), then what it implies ("no GPU").
            reason = self.check() or next(
                (r for r in (REQUIREMENTS[p].missing() for p in self.parents) if r), None
            )
            self._missing.append(reason)
        return self._missing[0]

    def marks(self, support_required: str = "required") -> list[Any]:
        """The pytest marks of a test with this requirement (``"optional"``: the mark only)."""
        if support_required not in ("required", "optional"):
            raise ValueError(
                f"support_required must be 'required' or 'optional', got {support_required!r}"
            )
        with warnings.catch_warnings():  # the plugin registers the marks where it is enabled
            warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)
            marks = [getattr(pytest.mark, self.name)]
        if support_required == "required":
            reason = self.missing()
            marks.append(pytest.mark.skipif(reason is not None, reason=reason or ""))
        return marks

    def __call__(self, func: Any = None, *, support_required: str = "required") -> Any:
        """``@requires_x`` or ``@requires_x(support_required="optional")``."""
        marks = self.marks(support_required)
        if func is None:
            return functools.partial(_apply_marks, marks)
        return _apply_marks(marks, func)


def _apply_marks(marks: Sequence[Any], func: Any) -> Any:
    for mark in reversed(marks):
        func = mark(func)
    return func


class Feature(Requirement):
    """``tvm.testing.Feature(name, ...)``: a requirement a test suite declares itself, as
    TVM 0.19's; calling it decorates a test, and it is known by name as a parent afterwards.

    Parameters
    ----------
    name : str
        The pytest mark.
    long_name : str, optional
        What a skip's reason calls it (the name by default).
    cmake_flag : str, optional
        A ``tvm.support.libinfo()`` flag that must be on.
    target_kind_enabled, target_kind_hardware : str, optional
        A target kind this TVM build must support, and one this machine must have a device of.
    compile_time_check, run_time_check : callable, optional
        Return True when the feature is there, else a string saying why not.
    parent_features : str or list of str, optional
        Requirements this one implies (their names).
    """

    def __init__(
        self,
        name: str,
        long_name: str | None = None,
        cmake_flag: str | None = None,
        target_kind_enabled: str | None = None,
        compile_time_check: Callable[[], Any] | None = None,
        target_kind_hardware: str | None = None,
        run_time_check: Callable[[], Any] | None = None,
        parent_features: str | Sequence[str] | None = None,
    ) -> None:
        label = long_name or name
        checks: list[Callable[[], str | None]] = []
        if cmake_flag is not None:
            checks.append(_library(cmake_flag, label, ""))
        if target_kind_enabled is not None:
            checks.append(_no_device(target_kind_enabled, label))
        if target_kind_hardware is not None:
            kind = target_kind_hardware
            checks.append(lambda: None if _device_exists(kind) else f"{label}: no {kind} device")
        checks += [_user_check(c, label) for c in (compile_time_check, run_time_check) if c]
        parents = [parent_features] if isinstance(parent_features, str) else parent_features
        super().__init__(
            name,
            label,
            lambda: next((r for r in (c() for c in checks) if r), None),
            tuple(parents or ()),
        )
        REQUIREMENTS[name] = self


def _user_check(check: Callable[[], Any], label: str) -> Callable[[], str | None]:
    """A TVM 0.19 check (True, or why not) as a requirement's check (None, or why not)."""
    return lambda: None if (result := check()) is True else f"{label}: {result}"


#: Every requirement, by its mark name.
REQUIREMENTS: dict[str, Requirement] = {
    r.name: r
    for r in (
        Requirement("llvm", "LLVM", _no_device("llvm", "LLVM")),
        Requirement("gpu", "GPU", _no_gpu),
        Requirement("multi_gpu", "Multiple GPUs", _fewer_than_two_gpus, ("gpu",)),
        Requirement("x86", "x86 architecture", _host_arch("x86", ("x86_64", "i386", "i686"))),
        Requirement("aarch64", "AArch64 architecture", _host_arch("AArch64", ("aarch64",))),
        Requirement("cuda", "CUDA", _no_device("cuda", "CUDA"), ("gpu",)),
        Requirement("tensorcore", "NVIDIA Tensor Core", lambda: None, ("cuda",)),
        Requirement("cudnn", "cuDNN", _library("USE_CUDNN", "cuDNN", "cuda")),
        Requirement("cublas", "cuBLAS", _library("USE_CUBLAS", "cuBLAS", "cuda")),
        Requirement("nccl", "NCCL", _library("USE_NCCL", "NCCL", "cuda")),
        Requirement("nvptx", "NVPTX", _no_device("nvptx", "NVPTX"), ("llvm", "gpu")),
        Requirement(
            "cudagraph",
            "CUDA Graph",
            _library("USE_GRAPH_EXECUTOR_CUDA_GRAPH", "CUDA Graph", "cuda"),
        ),
        Requirement("opencl", "OpenCL", _no_device("opencl", "OpenCL"), ("gpu",)),
        Requirement("rocm", "ROCm", _no_device("rocm", "ROCm"), ("gpu",)),
        Requirement("matrixcore", "AMD Matrix Core", lambda: None, ("rocm",)),
        Requirement("hipblas", "hipBLAS", _library("USE_HIPBLAS", "hipBLAS", "rocm")),
        Requirement("metal", "Metal", _no_device("metal", "Metal"), ("gpu",)),
        Requirement("vulkan", "Vulkan", _no_device("vulkan", "Vulkan"), ("gpu",)),
        Requirement("cutlass", "CUTLASS", _library("USE_CUTLASS", "CUTLASS", "cuda")),
        Requirement("rpc", "RPC", _library("USE_RPC", "RPC", "")),
        Requirement("libtorch", "LibTorch", _library("USE_LIBTORCH", "LibTorch", "")),
        Requirement("hexagon", "Hexagon", _library("USE_HEXAGON", "Hexagon", "")),
        Requirement("OpenCLML", "CLML", _library("USE_CLML", "CLML", "opencl")),
        Requirement("NNAPI", "NNAPI", _library("USE_NNAPI_CODEGEN", "NNAPI", "")),
        Requirement("mrvl", "Marvell", _library("USE_MRVL", "Marvell", "")),
        Requirement("vitis_ai", "Vitis AI", _library("USE_VITIS_AI", "Vitis AI", "")),
        Requirement(
            "aprofile-aem-fvp",
            "AProfile AEM FVP",
            lambda: "AProfile AEM FVP: the Arm FVP runner is not part of TVM 0.27",
        ),
        Requirement("arm_dot", "ARM dot product", _cpu_features("ARM dot product", ("dotprod",))),
        Requirement("arm_fp16", "Arm FP16", _cpu_features("Arm FP16", ("fullfp16",))),
        Requirement("arm_sve", "AArch64 SVE", _cpu_features("AArch64 SVE", ("sve",))),
        Requirement("arm_sme", "AArch64 SME", _cpu_features("AArch64 SME", ("sme",))),
        Requirement(
            "x86_vnni",
            "x86 VNNI",
            _cpu_features("x86 VNNI", ("avx512vnni",), ("avxvnni",)),
            ("x86",),
        ),
        Requirement(
            "x86_avx512",
            "x86 AVX512",
            _cpu_features(
                "x86 AVX512", ("avx512bw", "avx512cd", "avx512dq", "avx512vl", "avx512f")
            ),
            ("x86",),
        ),
        Requirement("x86_amx", "x86 AMX", _cpu_features("x86 AMX", ("amx-int8",)), ("x86",)),
        Requirement(
            "skylake_avx512",
            "Skylake AVX512",
            _cpu_features("Skylake AVX512", ("avx512bw", "avx512cd", "avx512dq", "avx512f")),
            ("x86",),
        ),
        Requirement(
            "cascadelake",
            "Cascade Lake (AVX512 VNNI)",
            _cpu_features("Cascade Lake", ("avx512f", "avx512vnni")),
            ("x86",),
        ),
    )
}

requires_llvm = REQUIREMENTS["llvm"]
requires_gpu = REQUIREMENTS["gpu"]
uses_gpu = requires_gpu(support_required="optional")
requires_multi_gpu = REQUIREMENTS["multi_gpu"]
uses_multi_gpu = requires_multi_gpu(support_required="optional")
requires_x86 = REQUIREMENTS["x86"]
requires_aarch64 = REQUIREMENTS["aarch64"]
requires_cuda = REQUIREMENTS["cuda"]
requires_tensorcore = REQUIREMENTS["tensorcore"]
requires_cudnn = REQUIREMENTS["cudnn"]
requires_cublas = REQUIREMENTS["cublas"]
requires_nccl = REQUIREMENTS["nccl"]
requires_nvptx = REQUIREMENTS["nvptx"]
requires_cudagraph = REQUIREMENTS["cudagraph"]
requires_opencl = REQUIREMENTS["opencl"]
requires_rocm = REQUIREMENTS["rocm"]
requires_matrixcore = REQUIREMENTS["matrixcore"]
requires_hipblas = REQUIREMENTS["hipblas"]
requires_metal = REQUIREMENTS["metal"]
requires_vulkan = REQUIREMENTS["vulkan"]
requires_cutlass = REQUIREMENTS["cutlass"]
requires_rpc = REQUIREMENTS["rpc"]
requires_libtorch = REQUIREMENTS["libtorch"]
requires_hexagon = REQUIREMENTS["hexagon"]
requires_arm_dot = REQUIREMENTS["arm_dot"]
requires_arm_fp16 = REQUIREMENTS["arm_fp16"]
requires_aarch64_sve = REQUIREMENTS["arm_sve"]
requires_aarch64_sme = REQUIREMENTS["arm_sme"]
requires_x86_vnni = REQUIREMENTS["x86_vnni"]
requires_x86_avx512 = REQUIREMENTS["x86_avx512"]
requires_x86_amx = REQUIREMENTS["x86_amx"]
requires_skylake_avx512 = REQUIREMENTS["skylake_avx512"]
requires_cascadelake = REQUIREMENTS["cascadelake"]
requires_openclml = REQUIREMENTS["OpenCLML"]
requires_nnapi = REQUIREMENTS["NNAPI"]
requires_mrvl = REQUIREMENTS["mrvl"]
requires_vitis_ai = REQUIREMENTS["vitis_ai"]
requires_aprofile_aem_fvp = REQUIREMENTS["aprofile-aem-fvp"]


def get_dtype_range(dtype: str) -> tuple[Any, Any]:
    """The smallest and largest value of ``dtype`` (NumPy's ``finfo``/``iinfo``; bool 0, 1)."""
    np_dtype = np.dtype(dtype)
    if np_dtype.kind == "f":
        info: Any = np.finfo(np_dtype)
    elif np_dtype.kind in "iu":
        info = np.iinfo(np_dtype)
    elif np_dtype.kind == "b":
        return 0, 1
    else:
        raise TypeError(f"get_dtype_range: no range for dtype {dtype!r}")
    return info.min, info.max


@contextlib.contextmanager
def enable_span_filling() -> Iterator[None]:
    """A scope in which TVM 0.19's frontends filled source spans: here a scope that changes
    nothing, as the Relax form the front end builds carries no spans."""
    yield


@contextlib.contextmanager
def disable_span_filling() -> Iterator[None]:
    """A scope without span filling: the front end never fills spans, so nothing changes."""
    yield


#: Target kind -> the requirement a test parametrized over it carries.
_KIND_REQUIREMENT = {
    "llvm": "llvm",
    "cuda": "cuda",
    "nvptx": "nvptx",
    "rocm": "rocm",
    "vulkan": "vulkan",
    "metal": "metal",
    "opencl": "opencl",
    "hexagon": "hexagon",
}


def target_marks(target: Any) -> list[Any]:
    """The marks of one ``target`` parametrization: its requirement (skipped where missing)."""
    requirement = _KIND_REQUIREMENT.get(target_kind(target))
    return REQUIREMENTS[requirement].marks() if requirement else []


def requires_cuda_compute_version(major_version: int, minor_version: int = 0) -> Any:
    """Skip unless a CUDA device of compute capability >= ``major.minor`` is present."""
    reason = requires_cuda.missing()
    if reason is None:
        version = tuple(int(p) for p in str(tvm.cuda(0).compute_version).split("."))
        if version < (major_version, minor_version):
            reason = f"needs CUDA compute capability {major_version}.{minor_version}"
    return _apply_marks_factory([*requires_cuda.marks(), _skip(reason)])


def requires_nvcc_version(
    major_version: int, minor_version: int = 0, release_version: int = 0
) -> Any:
    """Skip unless nvcc >= the version is found (never, without CUDA)."""
    reason = requires_cuda.missing()
    if reason is None:
        from tvm.support import nvcc

        try:
            found = tuple(nvcc.get_cuda_version())
        except Exception as err:  # no nvcc on PATH
            found, reason = (), f"nvcc not found: {err}"
        if reason is None and found < (major_version, minor_version, release_version):
            reason = f"needs nvcc {major_version}.{minor_version}.{release_version}"
    return _apply_marks_factory([*requires_cuda.marks(), _skip(reason)])


def requires_package(*packages: str) -> Any:
    """Skip unless every Python package named is importable."""
    missing = [p for p in packages if importlib.util.find_spec(p) is None]
    reason = f"needs the Python package(s) {', '.join(missing)}" if missing else None
    return _apply_marks_factory([_skip(reason)])


def skip_if_no_reference_system(func: Any) -> Any:
    """TVM 0.19 ran these on its reference (CI) system only: skipped here."""
    return pytest.mark.skip(reason="needs TVM's reference system (the Arm Corstone FVP)")(func)


def _skip(reason: str | None) -> Any:
    return pytest.mark.skipif(reason is not None, reason=reason or "")


def _apply_marks_factory(marks: list[Any]) -> Callable[[Any], Any]:
    return functools.partial(_apply_marks, marks)


# -- parametrization ----------------------------------------------------------------------------


def parametrize_targets(*args: Any) -> Any:
    """``@parametrize_targets("llvm", "cuda")``: run the test once per target named.

    Bare (``@parametrize_targets``) it leaves the test to the plugin, which runs a test taking
    ``target`` over :func:`test_targets`.
    """
    if len(args) == 1 and callable(args[0]):
        return args[0]
    return pytest.mark.parametrize("target", list(args), scope="session")


def exclude_targets(*targets: str) -> Callable[[Any], Any]:
    """Leave out the target kinds named when the plugin parametrizes ``target``."""

    def mark(func: Any) -> Any:
        func.tvm_excluded_targets = targets
        return func

    return mark


def known_failing_targets(*targets: str) -> Callable[[Any], Any]:
    """Mark the target kinds named ``xfail`` when the plugin parametrizes ``target``."""

    def mark(func: Any) -> Any:
        func.tvm_known_failing_targets = targets
        return func

    return mark


_groups = itertools.count()


def parameters(*value_sets: Sequence[Any], ids: Sequence[str] | None = None) -> list[Any]:
    """Correlated parameters: ``a, b = parameters((1, 2), (3, 4))`` runs (a=1, b=2), (a=3, b=4).

    Returns one fixture per position; the plugin parametrizes the ones a test uses together, as
    one group (never their cross product).
    """
    if not value_sets:
        raise ValueError("tvm.testing.parameters needs at least one set of values")
    width = len(value_sets[0])
    if any(len(v) != width for v in value_sets):
        raise ValueError("every value set of tvm.testing.parameters must have the same length")
    group = next(_groups)
    fixtures = []
    for position in range(width):

        def param(*_cls: Any, request: Any) -> Any:
            return request.param

        param.parametrize_group = group  # type: ignore[attr-defined]
        param.parametrize_values = [v[position] for v in value_sets]  # type: ignore[attr-defined]
        param.parametrize_ids = ids  # type: ignore[attr-defined]
        fixtures.append(pytest.fixture(param))
    return fixtures


def _mark_parameterizations(*params: Any, mark: Any, reason: str) -> Callable[[Any], Any]:
    def decorate(func: Any) -> Any:
        func.tvm_marked_parameterizations = {
            **getattr(func, "tvm_marked_parameterizations", {}),
            **{str(p): mark(reason=reason) for p in params},
        }
        return func

    return decorate


def xfail_parameterizations(*params: Any, reason: str) -> Callable[[Any], Any]:
    """Mark the test instances whose id contains one of ``params`` ``xfail``."""
    return _mark_parameterizations(*params, mark=pytest.mark.xfail, reason=reason)


def skip_parameterizations(*params: Any, reason: str) -> Callable[[Any], Any]:
    """Skip the test instances whose id contains one of ``params``."""
    return _mark_parameterizations(*params, mark=pytest.mark.skip, reason=reason)
