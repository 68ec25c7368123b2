"""Weight preparation for SVDQuant (docs/mxfp4.md, Weight preparation): ``decompose`` and the ``SVDQuantLinear`` module.

Standard SVDQuant for ``y = x W^T`` (W of shape (N, K)): optional smoothing ``x/lambda``,
``W diag(lambda)`` (activation outliers migrate into the weight); a truncated SVD of the
(smoothed) weight gives the 16-bit low-rank factors down (K, R) and up (R, N); the residual is
quantized to MXFP4 along K. At run time ``svd_quant`` adds the low-rank branch (unquantized x)
and the MXFP4 branch.
"""
import torch

from .ops import mxfp4_quantize, svd_quant


def _check_weight(weight, rank, smooth):
    if not isinstance(weight, torch.Tensor) or weight.dim() != 2 or not weight.is_floating_point():
        got = f"{weight.dim()}-D {weight.dtype}" if isinstance(weight, torch.Tensor) else type(weight).__name__
        raise ValueError(f"decompose: weight must be a 2-D floating tensor (N, K), got {got}")
    n, k = weight.shape
    if k % 32 != 0:
        raise ValueError(f"decompose: weight.shape[1] = K must be a multiple of 32, got K = {k}")
    if not isinstance(rank, int) or isinstance(rank, bool) or not 1 <= rank <= min(n, k):
        raise ValueError(f"decompose: rank must be an integer in [1, min(N, K)] = [1, {min(n, k)}], got {rank}")
    if smooth is not None:
        if not isinstance(smooth, torch.Tensor) or tuple(smooth.shape) != (k,):
            got = tuple(smooth.shape) if isinstance(smooth, torch.Tensor) else type(smooth).__name__
            raise ValueError(f"decompose: smooth must have shape ({k},), got {got}")
        bad = ~(torch.isfinite(smooth) & (smooth > 0))
        if bool(bad.any()):
            i = int(bad.nonzero()[0, 0])
            raise ValueError(f"decompose: smooth must be finite and positive, got smooth[{i}] = {float(smooth[i])}")


def decompose(weight, rank, smooth=None):
    """Split ``weight`` (N, K) into SVDQuant parts: ``(w_codes, w_scales, down, up)``.

    In float64 on the CPU: ``W' = weight * smooth`` (per input channel; ``smooth`` None, or (K,)
    finite positive), the truncated SVD ``W'^T ~ P S Q^T``, ``down = bf16(P[:, :R] S[:R])``
    (K, R), ``up = bf16(Q^T[:R])`` (R, N), and the residual ``W' - (down @ up)^T`` of the
    bf16-rounded factors (so that the FP4 part absorbs their rounding error) quantized by
    ``mxfp4_quantize(..., "round")`` from float32. Returns uint8 (N, K/2), uint8
    (N, ceil(K/64), 2), bfloat16 (K, R), bfloat16 (R, N) on ``weight``'s device. K must be a
    multiple of 32 and ``1 <= rank <= min(N, K)``; violations raise ``ValueError``.
    Singular-vector signs are not normative.
    """
    _check_weight(weight, rank, smooth)
    w = weight.detach().to(device="cpu", dtype=torch.float64)
    if smooth is not None:
        w = w * smooth.detach().to(device="cpu", dtype=torch.float64)
    p, sigma, qt = torch.linalg.svd(w.T, full_matrices=False)
    down = (p[:, :rank] * sigma[:rank]).to(torch.bfloat16)
    up = qt[:rank, :].to(torch.bfloat16)
    residual = w - (down.to(torch.float64) @ up.to(torch.float64)).T
    w_codes, w_scales = mxfp4_quantize(residual.to(torch.float32), "round")
    device = weight.device
    return w_codes.to(device), w_scales.to(device), down.to(device), up.to(device)


class SVDQuantLinear(torch.nn.Module):
    """A drop-in inference replacement of ``nn.Linear`` through :func:`svd_quant`.

    Buffers (the state_dict): ``w_codes`` uint8 (N, K/2), ``w_scales`` uint8 (N, ceil(K/64), 2),
    ``down`` bfloat16 (K, R), ``up`` bfloat16 (R, N), ``smooth`` float32 (K,) when
    ``has_smooth``, ``bias`` float32 (N,) when ``bias``. The constructor allocates zeros (for
    ``load_state_dict``); :meth:`from_linear` fills them with :func:`decompose`.

    ``forward(x)``: x floating ``(*, K)``; ``xs = bf16(float32(x) / smooth)`` (or ``x.to(bf16)``),
    ``y = svd_quant(xs, ...)``, ``+ bias`` in float32; returns ``x.dtype`` with x's leading shape.
    """

    def __init__(self, in_features, out_features, rank=32, bias=True, has_smooth=False, device=None):
        super().__init__()
        if in_features % 32 != 0:
            raise ValueError(f"SVDQuantLinear: in_features must be a multiple of 32, got {in_features}")
        if not 1 <= rank <= min(in_features, out_features):
            raise ValueError(f"SVDQuantLinear: rank must be in [1, {min(in_features, out_features)}], got {rank}")
        self.in_features = in_features
        self.out_features = out_features
        self.rank = rank
        k, n = in_features, out_features
        self.register_buffer("w_codes", torch.zeros(n, k // 2, dtype=torch.uint8, device=device))
        self.register_buffer("w_scales", torch.zeros(n, (k + 63) // 64, 2, dtype=torch.uint8, device=device))
        self.register_buffer("down", torch.zeros(k, rank, dtype=torch.bfloat16, device=device))
        self.register_buffer("up", torch.zeros(rank, n, dtype=torch.bfloat16, device=device))
        if has_smooth:
            self.register_buffer("smooth", torch.ones(k, dtype=torch.float32, device=device))
        else:
            self.smooth = None
        if bias:
            self.register_buffer("bias", torch.zeros(n, dtype=torch.float32, device=device))
        else:
            self.bias = None

    @classmethod
    def from_linear(cls, linear, rank=32, smooth=None):
        """An SVDQuantLinear computing ``linear`` (weight (N, K), optional bias) at rank ``rank``."""
        n, k = linear.weight.shape
        device = linear.weight.device
        layer = cls(k, n, rank=rank, bias=linear.bias is not None, has_smooth=smooth is not None, device=device)
        w_codes, w_scales, down, up = decompose(linear.weight, rank, smooth)
        layer.w_codes.copy_(w_codes)
        layer.w_scales.copy_(w_scales)
        layer.down.copy_(down)
        layer.up.copy_(up)
        if smooth is not None:
            layer.smooth.copy_(smooth.detach().to(torch.float32))
        if linear.bias is not None:
            layer.bias.copy_(linear.bias.detach().to(torch.float32))
        return layer

    def forward(self, x):
        if x.shape[-1] != self.in_features:
            raise RuntimeError(
                f"SVDQuantLinear: expected input with last dimension {self.in_features}, got {x.shape[-1]}")
        lead = x.shape[:-1]
        if self.smooth is not None:
            xs = (x.to(torch.float32) / self.smooth).to(torch.bfloat16)
        else:
            xs = x.to(torch.bfloat16)
        # Batch dimensions folded into rows (a rank-1 x becomes one row); svd_quant is row-wise.
        y = svd_quant(xs.reshape(-1, self.in_features), self.w_codes, self.w_scales, self.down, self.up)
        if self.bias is not None:
            y = y.to(torch.float32) + self.bias
        return y.to(x.dtype).reshape(lead + (self.out_features,))

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, rank={self.rank}, "
                f"bias={self.bias is not None}, smooth={self.smooth is not None}")
