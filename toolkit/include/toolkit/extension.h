// toolkit/extension.h: what a C++ extension needs to take and return toolkit tensors.
//
// Built by toolkit.utils.cpp_extension (load, load_inline, CppExtension), which puts this folder and
// pybind11's on the include path and defines TOOLKIT_EXTENSION_NAME (and TORCH_EXTENSION_NAME, so
// `PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)` from a PyTorch extension compiles unchanged).
//
// pybind11 already gives functions, classes, numbers, strings, containers and numpy arrays. This header adds
// only the tensor:
//
//   toolkit::Tensor        a zero-copy view of a toolkit CPU tensor: data_ptr<T>(), sizes(), strides() (in
//                          elements, as torch's), dim(), numel(), scalar_type(), is_contiguous(). A function
//                          taking or returning toolkit::Tensor (or std::vector<toolkit::Tensor>, returned as a
//                          list) binds with m.def as any other; the caster below converts at the boundary.
//   toolkit::empty/zeros   a new tensor of given sizes and dtype (numpy allocates it, toolkit.from_numpy wraps
//                          it, so Python receives a toolkit.Tensor that owns the memory); empty_like/zeros_like.
//   TOOLKIT_CHECK(...)     throw RuntimeError (TOOLKIT_CHECK_VALUE: ValueError, TOOLKIT_CHECK_INDEX: IndexError)
//                          with the message's parts streamed together, as TORCH_CHECK does.
//   TOOLKIT_DISPATCH_FLOATING_TYPES(type, name, lambda)  run the lambda with `scalar_t` float or double.
//
// A tensor that requires grad arrives as a view of its data (autograd is the Python side's: wrap the C++
// function in a toolkit.autograd.Function). Tensors on a CUDA device are refused with a TypeError.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace toolkit {

namespace py = pybind11;

// ------------------------------------------------------------------------------------------------ dtypes
enum class ScalarType { Bool, Byte, Char, Short, Int, Long, Half, Float, Double, ComplexFloat, ComplexDouble };

constexpr ScalarType kBool = ScalarType::Bool, kByte = ScalarType::Byte, kUInt8 = ScalarType::Byte,
                     kChar = ScalarType::Char, kInt8 = ScalarType::Char, kShort = ScalarType::Short,
                     kInt16 = ScalarType::Short, kInt = ScalarType::Int, kInt32 = ScalarType::Int,
                     kLong = ScalarType::Long, kInt64 = ScalarType::Long, kHalf = ScalarType::Half,
                     kFloat16 = ScalarType::Half, kFloat = ScalarType::Float, kFloat32 = ScalarType::Float,
                     kDouble = ScalarType::Double, kFloat64 = ScalarType::Double,
                     kComplexFloat = ScalarType::ComplexFloat, kComplexDouble = ScalarType::ComplexDouble;

// numpy's name for each ScalarType, in the enum's order (toolkit's dtypes are numpy's underneath).
inline const char* numpy_name(ScalarType t) {
    static const char* names[] = {"bool",    "uint8",   "int8",    "int16",     "int32",     "int64",
                                  "float16", "float32", "float64", "complex64", "complex128"};
    return names[static_cast<int>(t)];
}

inline const char* toString(ScalarType t) {
    static const char* names[] = {"Bool", "Byte", "Char", "Short", "Int", "Long",
                                  "Half", "Float", "Double", "ComplexFloat", "ComplexDouble"};
    return names[static_cast<int>(t)];
}

// ------------------------------------------------------------------------------------------------ errors
namespace detail {
inline void stream_all(std::ostringstream&) {}
template <typename T, typename... Rest>
void stream_all(std::ostringstream& os, const T& first, const Rest&... rest) {
    os << first;
    stream_all(os, rest...);
}
template <typename... Args>
std::string message(const char* condition, const Args&... args) {
    std::ostringstream os;
    stream_all(os, args...);
    std::string text = os.str();
    return text.empty() ? std::string("Expected ") + condition + " to be true, but got false." : text;
}
}  // namespace detail

// pybind11 translates these standard exceptions into RuntimeError, ValueError and IndexError.
#define TOOLKIT_CHECK(cond, ...) \
    do {                                                                                      \
        if (!(cond)) throw std::runtime_error(::toolkit::detail::message(#cond, ##__VA_ARGS__)); \
    } while (0)
#define TOOLKIT_CHECK_VALUE(cond, ...) \
    do {                                                                                      \
        if (!(cond)) throw std::invalid_argument(::toolkit::detail::message(#cond, ##__VA_ARGS__)); \
    } while (0)
#define TOOLKIT_CHECK_INDEX(cond, ...) \
    do {                                                                                      \
        if (!(cond)) throw std::out_of_range(::toolkit::detail::message(#cond, ##__VA_ARGS__)); \
    } while (0)

// ------------------------------------------------------------------------------------------------ Tensor
namespace detail {
inline py::module_& toolkit_module() {
    // Leaked on purpose: a module object must not be released after the interpreter finalizes.
    static py::module_* mod = new py::module_(py::module_::import("toolkit"));
    return *mod;
}
inline ScalarType scalar_type_of(const py::dtype& dt) {
    static const ScalarType types[] = {kBool, kByte, kChar, kShort, kInt, kLong,
                                       kHalf, kFloat, kDouble, kComplexFloat, kComplexDouble};
    for (ScalarType t : types) {
        if (dt.equal(py::dtype(numpy_name(t)))) return t;
    }
    throw py::type_error("toolkit::Tensor: unsupported dtype " + std::string(py::str(dt)));
}
template <typename T>
struct scalar_of;  // the ScalarType of a C++ element type, for data_ptr<T>()'s check
#define TOOLKIT_SCALAR_OF(T, S) \
    template <>                 \
    struct scalar_of<T> {       \
        static constexpr ScalarType value = S; \
    };
TOOLKIT_SCALAR_OF(bool, kBool)
TOOLKIT_SCALAR_OF(uint8_t, kByte)
TOOLKIT_SCALAR_OF(int8_t, kChar)
TOOLKIT_SCALAR_OF(int16_t, kShort)
TOOLKIT_SCALAR_OF(int32_t, kInt)
TOOLKIT_SCALAR_OF(int64_t, kLong)
TOOLKIT_SCALAR_OF(float, kFloat)
TOOLKIT_SCALAR_OF(double, kDouble)
#undef TOOLKIT_SCALAR_OF
}  // namespace detail

class Tensor {
  public:
    Tensor() = default;

    // The view of a toolkit.Tensor `obj` (which it keeps alive), through its zero-copy numpy array.
    explicit Tensor(py::object obj) : obj_(std::move(obj)) {
        array_ = py::reinterpret_borrow<py::array>(obj_.attr("numpy")(py::arg("force") = true));
        type_ = detail::scalar_type_of(array_.dtype());
    }

    // A new tensor owning `array` (toolkit.from_numpy shares its memory).
    static Tensor from_array(const py::array& array) {
        return Tensor(detail::toolkit_module().attr("from_numpy")(array));
    }

    bool defined() const { return static_cast<bool>(obj_); }
    ScalarType scalar_type() const { return type_; }
    int64_t dim() const { return array_.ndim(); }
    int64_t numel() const { return array_.size(); }
    int64_t element_size() const { return array_.itemsize(); }
    int64_t size(int64_t d) const { return array_.shape(wrap(d)); }
    int64_t stride(int64_t d) const { return array_.strides(wrap(d)) / array_.itemsize(); }
    std::vector<int64_t> sizes() const { return {array_.shape(), array_.shape() + array_.ndim()}; }
    std::vector<int64_t> strides() const {
        std::vector<int64_t> out(array_.ndim());
        for (int64_t d = 0; d < dim(); ++d) out[d] = stride(d);
        return out;
    }
    bool is_contiguous() const {
        if (numel() == 0) return true;  // as torch: an empty tensor is contiguous whatever its strides
        int64_t expected = 1;
        for (int64_t d = dim() - 1; d >= 0; --d) {
            if (size(d) != 1 && stride(d) != expected) return false;
            expected *= size(d);
        }
        return true;
    }

    void* data_ptr() const { return const_cast<void*>(array_.data()); }
    template <typename T>
    T* data_ptr() const {
        TOOLKIT_CHECK(detail::scalar_of<T>::value == type_, "expected scalar type ",
                      toString(detail::scalar_of<T>::value), " but found ", toString(type_));
        return static_cast<T*>(data_ptr());
    }

    // The Python toolkit.Tensor, to call any toolkit method on it from C++: t.ptr().attr("sum")().
    const py::object& ptr() const { return obj_; }
    // The numpy array sharing the tensor's memory.
    const py::array& array() const { return array_; }

  private:
    int64_t wrap(int64_t d) const {
        int64_t n = dim();
        TOOLKIT_CHECK_INDEX(d >= -n && d < n, "Dimension out of range (expected to be in range of [", -n, ", ",
                            n - 1, "], but got ", d, ")");
        return d < 0 ? d + n : d;
    }

    py::object obj_;
    py::array array_;
    ScalarType type_ = kFloat;
};

// ------------------------------------------------------------------------------------------------ factories
inline Tensor empty(const std::vector<int64_t>& sizes, ScalarType dtype = kFloat) {
    return Tensor::from_array(py::array(py::dtype(numpy_name(dtype)), std::vector<py::ssize_t>(sizes.begin(), sizes.end())));
}
inline Tensor zeros(const std::vector<int64_t>& sizes, ScalarType dtype = kFloat) {
    Tensor t = empty(sizes, dtype);
    std::fill_n(static_cast<char*>(t.data_ptr()), t.numel() * t.element_size(), 0);
    return t;
}
inline Tensor empty_like(const Tensor& t) { return empty(t.sizes(), t.scalar_type()); }
inline Tensor zeros_like(const Tensor& t) { return zeros(t.sizes(), t.scalar_type()); }

// ------------------------------------------------------------------------------------------------ dispatch
#define TOOLKIT_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...)                                                    \
    [&] {                                                                                                   \
        switch (TYPE) {                                                                                     \
            case ::toolkit::kFloat: {                                                                       \
                using scalar_t = float;                                                                     \
                return __VA_ARGS__();                                                                       \
            }                                                                                               \
            case ::toolkit::kDouble: {                                                                      \
                using scalar_t = double;                                                                    \
                return __VA_ARGS__();                                                                       \
            }                                                                                               \
            default:                                                                                        \
                throw std::runtime_error(std::string("\"") + NAME + "\" not implemented for '" +            \
                                         ::toolkit::toString(TYPE) + "'");                                  \
        }                                                                                                   \
    }()

}  // namespace toolkit

// ------------------------------------------------------------------------------------------------ caster
// toolkit.Tensor <-> toolkit::Tensor at pybind11's boundary: in, a view of the tensor; out, the tensor itself.
namespace pybind11::detail {
template <>
struct type_caster<toolkit::Tensor> {
    PYBIND11_TYPE_CASTER(toolkit::Tensor, const_name("toolkit.Tensor"));

    bool load(handle src, bool) {
        static object* tensor_type = new object(toolkit::detail::toolkit_module().attr("Tensor"));
        if (!isinstance(src, *tensor_type)) return false;
        value = toolkit::Tensor(reinterpret_borrow<object>(src));
        return true;
    }

    static handle cast(const toolkit::Tensor& t, return_value_policy, handle) {
        if (!t.defined()) return none().release();
        return t.ptr().inc_ref();
    }
};
}  // namespace pybind11::detail
