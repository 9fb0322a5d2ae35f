// The LLTM cell's forward and backward in C++, as PyTorch's C++-extension tutorial (extension-cpp) writes them.
//
// The same ATen-style code as the tutorial's (extensions/lltm_cpp/torch_lltm.cpp), on toolkit's ops: each
// toolkit::addmm, toolkit::sigmoid, `a * b`, ... is toolkit's op called through toolkit/extension.h, so the matrix
// products run in toolkit's kernels rather than in loops here, and the numbers are toolkit's. Shapes: input [B, I],
// weights [3S, I + S], bias [3S] or [1, 3S], old_h and old_cell [B, S].
#include <toolkit/extension.h>

#include <vector>

using toolkit::Tensor;

namespace {

// s'(z) = (1 - s(z)) * s(z)
Tensor d_sigmoid(const Tensor& z) {
    auto s = toolkit::sigmoid(z);
    return (1 - s) * s;
}

// tanh'(z) = 1 - tanh^2(z)
Tensor d_tanh(const Tensor& z) { return 1 - z.tanh().pow(2); }

// elu'(z) = relu'(z) + { alpha * exp(z) if (alpha * (exp(z) - 1)) < 0, else 0}
Tensor d_elu(const Tensor& z, double alpha = 1.0) {
    auto e = z.exp();
    auto mask = (alpha * (e - 1)) < 0;
    return (z > 0).type_as(z) + mask.type_as(z) * (alpha * e);
}

void check(const Tensor& t, const char* name, int64_t dim) {
    TOOLKIT_CHECK(t.dim() == dim, name, " must have ", dim, " dimensions, got ", t.dim());
    TOOLKIT_CHECK(t.is_contiguous(), name, " must be contiguous");
}

}  // namespace

std::vector<Tensor> lltm_forward(Tensor input, Tensor weights, Tensor bias, Tensor old_h, Tensor old_cell) {
    check(input, "input", 2), check(weights, "weights", 2), check(old_h, "old_h", 2), check(old_cell, "old_cell", 2);
    TOOLKIT_CHECK(bias.is_contiguous() && bias.numel() == weights.size(0), "bias must hold ", weights.size(0), " values");
    const int64_t B = input.size(0), I = input.size(1), S = old_h.size(1), K = I + S;
    TOOLKIT_CHECK_VALUE(weights.size(0) == 3 * S && weights.size(1) == K, "weights must be [", 3 * S, ", ", K, "]");
    // Refused here, by name: the ops would broadcast a state of one row, or fail with a message about addmm.
    TOOLKIT_CHECK_VALUE(old_h.size(0) == B && old_cell.size(0) == B && old_cell.size(1) == S,
                        "old_h and old_cell must be [", B, ", ", S, "] (input's batch, old_h's state size)");
    const auto type = input.scalar_type();
    for (const Tensor* t : {&weights, &bias, &old_h, &old_cell})
        TOOLKIT_CHECK(t->scalar_type() == type, "all tensors must have the dtype of input");

    auto X = toolkit::cat({old_h, input}, /*dim=*/1);

    auto gate_weights = toolkit::addmm(bias, X, weights.transpose(0, 1));
    auto gates = gate_weights.chunk(3, /*dim=*/1);

    auto input_gate = toolkit::sigmoid(gates[0]);
    auto output_gate = toolkit::sigmoid(gates[1]);
    auto candidate_cell = toolkit::elu(gates[2], /*alpha=*/1.0);

    auto new_cell = old_cell + candidate_cell * input_gate;
    auto new_h = toolkit::tanh(new_cell) * output_gate;

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
    // Refused here, by name: the ops would broadcast a mismatched shape into a wrong gradient.
    for (const Tensor* t : {&grad_cell, &new_cell, &input_gate, &output_gate, &candidate_cell})
        TOOLKIT_CHECK_VALUE(t->size(0) == B && t->size(1) == S, "the state tensors must be [", B, ", ", S,
                            "] as grad_h");
    TOOLKIT_CHECK_VALUE(I >= 0 && X.size(0) == B && gate_weights.size(0) == B && gate_weights.size(1) == 3 * S &&
                            weights.size(0) == 3 * S && weights.size(1) == K,
                        "X, gate_weights and weights must be [", B, ", I + ", S, "], [", B, ", ", 3 * S, "] and [",
                        3 * S, ", I + ", S, "]");

    auto d_output_gate = toolkit::tanh(new_cell) * grad_h;
    auto d_tanh_new_cell = output_gate * grad_h;
    auto d_new_cell = d_tanh(new_cell) * d_tanh_new_cell + grad_cell;

    auto d_old_cell = d_new_cell;
    auto d_candidate_cell = input_gate * d_new_cell;
    auto d_input_gate = candidate_cell * d_new_cell;

    auto gates = gate_weights.chunk(3, /*dim=*/1);
    d_input_gate = d_input_gate * d_sigmoid(gates[0]);
    d_output_gate = d_output_gate * d_sigmoid(gates[1]);
    d_candidate_cell = d_candidate_cell * d_elu(gates[2]);

    auto d_gates = toolkit::cat({d_input_gate, d_output_gate, d_candidate_cell}, /*dim=*/1);

    auto d_weights = d_gates.t().mm(X);
    auto d_bias = d_gates.sum(/*dim=*/0, /*keepdim=*/true);

    auto d_X = d_gates.mm(weights);
    auto d_old_h = d_X.slice(/*dim=*/1, 0, S);
    auto d_input = d_X.slice(/*dim=*/1, S);

    return {d_old_h, d_input, d_weights, d_bias, d_old_cell};
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("forward", &lltm_forward, "LLTM forward");
    m.def("backward", &lltm_backward, "LLTM backward");
}
