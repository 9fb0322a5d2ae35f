// The C++ extension of the "C++ EXTENSIONS" slides: wrap a tensor's memory in an OpenCV cv::Mat (no copy),
// warp it with cv::warpPerspective and a 3x3 matrix, and return the result as a new tensor.
//
// One source builds with both libraries: toolkit.utils.cpp_extension defines TOOLKIT_EXTENSION_NAME (besides
// TORCH_EXTENSION_NAME), torch.utils.cpp_extension does not. Where toolkit's header differs from torch's:
//   - #include <toolkit/extension.h> in place of <torch/extension.h>, and toolkit::Tensor for at::Tensor;
//   - data_ptr<float>() for the slides' x.data<float>() (torch's deprecated spelling of the same; toolkit
//     has only data_ptr<T>());
//   - toolkit has no from_blob: the result is a toolkit::empty({rows, cols}) tensor the warped pixels are
//     copied into, which is what the slides' torch::from_blob(...).clone() does;
//   - TOOLKIT_CHECK for TORCH_CHECK (both throw what Python sees as RuntimeError).
// The checks are additions to the slides' code: cv::Mat reads the memory as a dense float32 matrix, so any
// other input would be misread rather than refused.
#ifdef TOOLKIT_EXTENSION_NAME
#include <toolkit/extension.h>
using Tensor = toolkit::Tensor;
#define CHECK TOOLKIT_CHECK
constexpr auto kFloat = toolkit::kFloat;
#else
#include <torch/extension.h>
using Tensor = at::Tensor;
#define CHECK TORCH_CHECK
constexpr auto kFloat = at::kFloat;
#endif

#include <opencv2/opencv.hpp>

#include <cstdint>
#include <cstring>

namespace {

// The pixels of `m` (CV_32FC1) as a new float32 tensor of its shape.
Tensor to_tensor(const cv::Mat& m) {
#ifdef TOOLKIT_EXTENSION_NAME
    Tensor out = toolkit::empty({m.rows, m.cols}, toolkit::kFloat);
    for (int r = 0; r < m.rows; ++r) {  // row by row: a cv::Mat's rows may be padded
        std::memcpy(out.data_ptr<float>() + int64_t(r) * m.cols, m.ptr<float>(r), sizeof(float) * m.cols);
    }
    return out;
#else
    return torch::from_blob(const_cast<float*>(m.ptr<float>()), {m.rows, m.cols}).clone();
#endif
}

void check_float_matrix(const Tensor& t, const char* what) {
    CHECK(t.scalar_type() == kFloat, "compute: ", what, " must be float32, got ", toString(t.scalar_type()));
    CHECK(t.is_contiguous(), "compute: ", what, " must be contiguous (call .contiguous() first)");
}

}  // namespace

Tensor compute(Tensor x, Tensor w) {
    CHECK(x.dim() == 2, "compute: image must be 2-D (height, width), got ", x.dim(), " dimensions");
    check_float_matrix(x, "image");
    CHECK(w.dim() == 2 && w.size(0) == 3 && w.size(1) == 3, "compute: warp must be a 3x3 matrix, got ",
          w.dim() == 2 ? std::to_string(w.size(0)) + "x" + std::to_string(w.size(1))
                       : std::to_string(w.dim()) + "-D tensor");
    check_float_matrix(w, "warp");

    cv::Mat input(x.size(0), x.size(1), CV_32FC1, x.data_ptr<float>());
    cv::Mat warp(3, 3, CV_32FC1, w.data_ptr<float>());

    cv::Mat output;
    cv::warpPerspective(input, output, warp, {64, 64});

    return to_tensor(output);
}

// The address of the tensor's memory as C++ sees it: equal to the Python tensor's data_ptr() where the
// tensor reached C++ without a copy.
int64_t data_address(Tensor x) { return static_cast<int64_t>(reinterpret_cast<intptr_t>(x.data_ptr())); }

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("compute", &compute);
    m.def("data_address", &data_address);
}
