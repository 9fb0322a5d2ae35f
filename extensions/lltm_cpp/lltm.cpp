// The LLTM cell's forward and backward in C++, from PyTorch's C++-extension tutorial (extension-cpp).
//
// The tutorial writes them with ATen ops (addmm, sigmoid, elu, ...); toolkit has no C++ op library, so the same
// math is written here as loops over contiguous float or double tensors (toolkit/extension.h gives the view of
// each tensor and allocates the results). Shapes: input [B, I], weights [3S, I + S], bias [3S] or [1, 3S],
// old_h and old_cell [B, S].
#include <toolkit/extension.h>

#include <cmath>
#include <vector>

using toolkit::Tensor;

namespace {

template <typename T>
T sigmoid(T z) { return T(1) / (T(1) + std::exp(-z)); }
template <typename T>
T d_sigmoid(T z) { T s = sigmoid(z); return (T(1) - s) * s; }
template <typename T>
T elu(T z) { return z > T(0) ? z : std::expm1(z); }  // alpha = 1
template <typename T>
T d_elu(T z) { return z > T(0) ? T(1) : std::exp(z); }
template <typename T>
T d_tanh(T z) { T t = std::tanh(z); return T(1) - t * t; }

void check(const Tensor& t, const char* name, int64_t dim) {
    TOOLKIT_CHECK(t.dim() == dim, name, " must have ", dim, " dimensions, got ", t.dim());
    TOOLKIT_CHECK(t.is_contiguous(), name, " must be contiguous");
}

}  // namespace

// Returns {new_h, new_cell, input_gate, output_gate, candidate_cell, X, gate_weights}, as the tutorial's.
std::vector<Tensor> lltm_forward(Tensor input, Tensor weights, Tensor bias, Tensor old_h, Tensor old_cell) {
    check(input, "input", 2), check(weights, "weights", 2), check(old_h, "old_h", 2), check(old_cell, "old_cell", 2);
    TOOLKIT_CHECK(bias.is_contiguous() && bias.numel() == weights.size(0), "bias must hold ", weights.size(0), " values");
    const int64_t B = input.size(0), I = input.size(1), S = old_h.size(1), K = I + S;
    TOOLKIT_CHECK_VALUE(weights.size(0) == 3 * S && weights.size(1) == K, "weights must be [", 3 * S, ", ", K, "]");
    // The loops read B rows of S values from each state: a smaller state would be read past its end.
    TOOLKIT_CHECK_VALUE(old_h.size(0) == B && old_cell.size(0) == B && old_cell.size(1) == S,
                        "old_h and old_cell must be [", B, ", ", S, "] (input's batch, old_h's state size)");
    const auto type = input.scalar_type();
    for (const Tensor* t : {&weights, &bias, &old_h, &old_cell})
        TOOLKIT_CHECK(t->scalar_type() == type, "all tensors must have the dtype of input");

    Tensor X = toolkit::empty({B, K}, type), gate_weights = toolkit::empty({B, 3 * S}, type);
    Tensor new_h = toolkit::empty({B, S}, type), new_cell = toolkit::empty({B, S}, type);
    Tensor input_gate = toolkit::empty({B, S}, type), output_gate = toolkit::empty({B, S}, type);
    Tensor candidate_cell = toolkit::empty({B, S}, type);

    TOOLKIT_DISPATCH_FLOATING_TYPES(type, "lltm_forward", [&] {
        const scalar_t *x = input.data_ptr<scalar_t>(), *w = weights.data_ptr<scalar_t>(),
                       *b = bias.data_ptr<scalar_t>(), *h = old_h.data_ptr<scalar_t>(),
                       *c = old_cell.data_ptr<scalar_t>();
        scalar_t *Xp = X.data_ptr<scalar_t>(), *g = gate_weights.data_ptr<scalar_t>();
        scalar_t *nh = new_h.data_ptr<scalar_t>(), *nc = new_cell.data_ptr<scalar_t>();
        scalar_t *ig = input_gate.data_ptr<scalar_t>(), *og = output_gate.data_ptr<scalar_t>(),
                 *cc = candidate_cell.data_ptr<scalar_t>();
        for (int64_t r = 0; r < B; ++r) {
            scalar_t* xr = Xp + r * K;  // X = cat([old_h, input], 1)
            for (int64_t j = 0; j < S; ++j) xr[j] = h[r * S + j];
            for (int64_t j = 0; j < I; ++j) xr[S + j] = x[r * I + j];
            for (int64_t o = 0; o < 3 * S; ++o) {  // gate_weights = addmm(bias, X, weights.t())
                scalar_t acc = b[o];
                for (int64_t k = 0; k < K; ++k) acc += xr[k] * w[o * K + k];
                g[r * 3 * S + o] = acc;
            }
            for (int64_t j = 0; j < S; ++j) {
                const int64_t i = r * S + j;
                const scalar_t* gr = g + r * 3 * S;
                ig[i] = sigmoid(gr[j]);
                og[i] = sigmoid(gr[S + j]);
                cc[i] = elu(gr[2 * S + j]);
                nc[i] = c[i] + cc[i] * ig[i];
                nh[i] = std::tanh(nc[i]) * og[i];
            }
        }
    });
    return {new_h, new_cell, input_gate, output_gate, candidate_cell, X, gate_weights};
}

// Returns {d_old_h, d_input, d_weights, d_bias, d_old_cell}, as the tutorial's (d_bias is [1, 3S]).
std::vector<Tensor> lltm_backward(Tensor grad_h, Tensor grad_cell, Tensor new_cell, Tensor input_gate,
                                  Tensor output_gate, Tensor candidate_cell, Tensor X, Tensor gate_weights,
                                  Tensor weights) {
    for (const Tensor* t : {&grad_h, &grad_cell, &new_cell, &input_gate, &output_gate, &candidate_cell, &X,
                            &gate_weights, &weights})
        check(*t, "every argument", 2);
    const int64_t B = grad_h.size(0), S = grad_h.size(1), K = X.size(1), I = K - S;
    // The loops index every argument by these sizes: any other shape would be read or written past its end.
    for (const Tensor* t : {&grad_cell, &new_cell, &input_gate, &output_gate, &candidate_cell})
        TOOLKIT_CHECK_VALUE(t->size(0) == B && t->size(1) == S, "the state tensors must be [", B, ", ", S,
                            "] as grad_h");
    TOOLKIT_CHECK_VALUE(I >= 0 && X.size(0) == B && gate_weights.size(0) == B && gate_weights.size(1) == 3 * S &&
                            weights.size(0) == 3 * S && weights.size(1) == K,
                        "X, gate_weights and weights must be [", B, ", I + ", S, "], [", B, ", ", 3 * S, "] and [",
                        3 * S, ", I + ", S, "]");
    const auto type = grad_h.scalar_type();
    Tensor d_old_h = toolkit::empty({B, S}, type), d_input = toolkit::empty({B, I}, type);
    Tensor d_weights = toolkit::zeros({3 * S, K}, type), d_bias = toolkit::zeros({1, 3 * S}, type);
    Tensor d_old_cell = toolkit::empty({B, S}, type), d_gates = toolkit::empty({B, 3 * S}, type);

    TOOLKIT_DISPATCH_FLOATING_TYPES(type, "lltm_backward", [&] {
        const scalar_t *gh = grad_h.data_ptr<scalar_t>(), *gc = grad_cell.data_ptr<scalar_t>(),
                       *nc = new_cell.data_ptr<scalar_t>(), *ig = input_gate.data_ptr<scalar_t>(),
                       *og = output_gate.data_ptr<scalar_t>(), *cc = candidate_cell.data_ptr<scalar_t>(),
                       *Xp = X.data_ptr<scalar_t>(), *g = gate_weights.data_ptr<scalar_t>(),
                       *w = weights.data_ptr<scalar_t>();
        scalar_t *dh = d_old_h.data_ptr<scalar_t>(), *dx = d_input.data_ptr<scalar_t>(),
                 *dw = d_weights.data_ptr<scalar_t>(), *db = d_bias.data_ptr<scalar_t>(),
                 *dc = d_old_cell.data_ptr<scalar_t>(), *dg = d_gates.data_ptr<scalar_t>();
        for (int64_t r = 0; r < B; ++r) {
            for (int64_t j = 0; j < S; ++j) {
                const int64_t i = r * S + j;
                const scalar_t* gr = g + r * 3 * S;
                const scalar_t d_output_gate = std::tanh(nc[i]) * gh[i];
                const scalar_t d_tanh_new_cell = og[i] * gh[i];
                const scalar_t d_new_cell = d_tanh(nc[i]) * d_tanh_new_cell + gc[i];
                dc[i] = d_new_cell;
                dg[r * 3 * S + j] = cc[i] * d_new_cell * d_sigmoid(gr[j]);
                dg[r * 3 * S + S + j] = d_output_gate * d_sigmoid(gr[S + j]);
                dg[r * 3 * S + 2 * S + j] = ig[i] * d_new_cell * d_elu(gr[2 * S + j]);
            }
            for (int64_t k = 0; k < K; ++k) {  // d_X = d_gates.mm(weights), split into d_old_h and d_input
                scalar_t acc = 0;
                for (int64_t o = 0; o < 3 * S; ++o) acc += dg[r * 3 * S + o] * w[o * K + k];
                if (k < S) dh[r * S + k] = acc; else dx[r * I + k - S] = acc;
            }
            for (int64_t o = 0; o < 3 * S; ++o) {  // d_weights = d_gates.t().mm(X); d_bias = d_gates.sum(0)
                const scalar_t d = dg[r * 3 * S + o];
                db[o] += d;
                for (int64_t k = 0; k < K; ++k) dw[o * K + k] += d * Xp[r * K + k];
            }
        }
    });
    return {d_old_h, d_input, d_weights, d_bias, d_old_cell};
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("forward", &lltm_forward, "LLTM forward");
    m.def("backward", &lltm_backward, "LLTM backward");
}
