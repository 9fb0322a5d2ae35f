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
//   toolkit::call(name, args...)  any toolkit op by name, through pybind11 (C++ has no op library of its own):
//                          toolkit::call("addmm", bias, x, w.t()) is toolkit.addmm(bias, x, w.t()), a toolkit::Tensor.
//                          Names: toolkit's functions ("addmm"; else toolkit.nn.functional's, so "elu"), dotted paths
//                          under toolkit ("special.expit"), registered ops ("ns::op"); an unknown name is an
//                          AttributeError naming it. call_list (several tensors), call_object (any result); helpers
//                          addmm, mm, cat, sigmoid, tanh, elu, exp, transpose, t, sum; Tensor methods (t, mm, chunk,
//                          slice, sum, pow, type_as, ...) and operators + - * / > <, so the tutorial's ATen code
//                          reads the same. Each takes the GIL (held already inside an m.def function).
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

// As <torch/extension.h>: `py::arg("dim") = 1`, `py::gil_scoped_release` and the like compile unchanged.
namespace py = pybind11;

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
// By the dtype's kind and width, not by comparing it with each numpy dtype: every op toolkit::call makes
// converts its result here, so this runs on each op of a C++ function written in ops.
inline ScalarType scalar_type_of(const py::dtype& dt) {
    const auto width = dt.itemsize();
    switch (dt.kind()) {
        case 'b': if (width == 1) return kBool; break;
        case 'u': if (width == 1) return kByte; break;
        case 'i':
            if (width == 1) return kChar;
            if (width == 2) return kShort;
            if (width == 4) return kInt;
            if (width == 8) return kLong;
            break;
        case 'f':
            if (width == 2) return kHalf;
            if (width == 4) return kFloat;
            if (width == 8) return kDouble;
            break;
        case 'c':
            if (width == 8) return kComplexFloat;
            if (width == 16) return kComplexDouble;
            break;
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

    // toolkit ops as methods, as torch::Tensor's (defined with toolkit::call, at the end of this header).
    Tensor t() const;
    Tensor transpose(int64_t dim0, int64_t dim1) const;
    Tensor mm(const Tensor& other) const;
    Tensor sigmoid() const;
    Tensor tanh() const;
    Tensor exp() const;
    Tensor pow(double exponent) const;
    Tensor sum(int64_t dim, bool keepdim = false) const;
    Tensor type_as(const Tensor& other) const;
    std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
    Tensor slice(int64_t dim, int64_t start, int64_t end = INT64_MAX) const;

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

// ------------------------------------------------------------------------------------------------ ops by name
// C++ has no op library of toolkit's own: an op is toolkit's Python function, called through pybind11, so a C++
// function can be written in ops as the ATen tutorial writes it (the op runs at toolkit's speed, in its kernels,
// with its numbers) instead of as loops. After the caster, as the calls convert toolkit::Tensor arguments.
namespace toolkit {
namespace detail {
// The toolkit function an op name names: "addmm" is toolkit.addmm (else toolkit.nn.functional.addmm, as torch::elu
// is F.elu); a dotted name is a path under toolkit ("linalg.norm"); "ns::op" is the registered op toolkit.ops.ns.op
// ("aten::op" is toolkit.op). Unknown: AttributeError naming the op.
inline py::object resolve(const std::string& name) {
    py::object tk = toolkit_module();
    auto fail = [&name](const std::string& looked) {
        return py::attribute_error("toolkit::call: no toolkit op named '" + name + "' (looked for " + looked + ")");
    };
    const auto ns = name.find("::");
    if (ns != std::string::npos) {
        const std::string space = name.substr(0, ns), op = name.substr(ns + 2);
        if (space == "aten") return resolve(op);
        try {
            return tk.attr("ops").attr(space.c_str()).attr(op.c_str());
        } catch (py::error_already_set& e) {
            if (!e.matches(PyExc_AttributeError)) throw;
            throw fail("toolkit.ops." + space + "." + op);
        }
    }
    py::object found = tk;
    if (name.find('.') != std::string::npos) {
        std::string::size_type start = 0;
        while (start <= name.size()) {
            const auto dot = std::min(name.find('.', start), name.size());
            const std::string part = name.substr(start, dot - start);
            if (part.empty() || !py::hasattr(found, part.c_str())) throw fail("toolkit." + name);
            found = found.attr(part.c_str());
            start = dot + 1;
        }
        return found;
    }
    if (!name.empty() && py::hasattr(tk, name.c_str())) return tk.attr(name.c_str());
    py::object functional = tk.attr("nn").attr("functional");
    if (!name.empty() && py::hasattr(functional, name.c_str())) return functional.attr(name.c_str());
    throw fail("toolkit." + name + " and toolkit.nn.functional." + name);
}
inline Tensor as_tensor(const std::string& name, py::object result) {
    static py::object* tensor_type = new py::object(toolkit_module().attr("Tensor"));
    if (!py::isinstance(result, *tensor_type))
        throw py::type_error("toolkit::call: op '" + name + "' returned " +
                             std::string(py::str(py::type::of(result).attr("__name__"))) +
                             ", not a tensor (use toolkit::call_object or toolkit::call_list)");
    return Tensor(std::move(result));
}
}  // namespace detail

// The op `name` called with `args` (tensors, numbers, vectors of tensors, py::arg("dim") = 1 keywords), its result
// as Python gave it. Takes the GIL (pybind11 needs it for every Python call; it is already held inside a function
// bound with m.def, so this costs nothing there, and makes the call safe from a function that released it). The
// objects returned are Python objects as well: keep, copy and drop them only where the GIL is held.
template <typename... Args>
py::object call_object(const std::string& name, Args&&... args) {
    py::gil_scoped_acquire gil;
    return detail::resolve(name)(std::forward<Args>(args)...);
}

// The op `name`'s tensor result: toolkit::call("addmm", bias, x, w.t()). An op that returns anything else is a
// TypeError naming it.
template <typename... Args>
Tensor call(const std::string& name, Args&&... args) {
    py::gil_scoped_acquire gil;
    return detail::as_tensor(name, call_object(name, std::forward<Args>(args)...));
}

// The tensors of an op that returns several (chunk, split, unbind, a custom op's tuple).
template <typename... Args>
std::vector<Tensor> call_list(const std::string& name, Args&&... args) {
    py::gil_scoped_acquire gil;
    std::vector<Tensor> out;
    for (py::handle item : call_object(name, std::forward<Args>(args)...))
        out.push_back(detail::as_tensor(name, py::reinterpret_borrow<py::object>(item)));
    return out;
}

// Named helpers for the ops of PyTorch's C++ tutorial, with torch::'s argument order.
inline Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2) { return call("addmm", self, mat1, mat2); }
inline Tensor mm(const Tensor& a, const Tensor& b) { return call("mm", a, b); }
inline Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0) { return call("cat", tensors, dim); }
inline Tensor sigmoid(const Tensor& t) { return call("sigmoid", t); }
inline Tensor tanh(const Tensor& t) { return call("tanh", t); }
inline Tensor exp(const Tensor& t) { return call("exp", t); }
inline Tensor elu(const Tensor& t, double alpha = 1.0) { return call("nn.functional.elu", t, py::arg("alpha") = alpha); }
inline Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1) { return call("transpose", t, dim0, dim1); }
inline Tensor t(const Tensor& self) { return call("t", self); }
inline Tensor sum(const Tensor& t, int64_t dim, bool keepdim = false) {
    return call("sum", t, dim, py::arg("keepdim") = keepdim);
}

// Tensor's methods and operators: the same ops (a + b is Python's a + b on the two toolkit tensors).
inline Tensor Tensor::t() const { return toolkit::t(*this); }
inline Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const { return toolkit::transpose(*this, dim0, dim1); }
inline Tensor Tensor::mm(const Tensor& other) const { return toolkit::mm(*this, other); }
inline Tensor Tensor::sigmoid() const { return toolkit::sigmoid(*this); }
inline Tensor Tensor::tanh() const { return toolkit::tanh(*this); }
inline Tensor Tensor::exp() const { return toolkit::exp(*this); }
inline Tensor Tensor::sum(int64_t dim, bool keepdim) const { return toolkit::sum(*this, dim, keepdim); }
inline Tensor Tensor::pow(double exponent) const { return call("pow", *this, exponent); }
inline Tensor Tensor::type_as(const Tensor& other) const { return call("Tensor.type_as", *this, other); }
inline std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const { return call_list("chunk", *this, chunks, dim); }
inline Tensor Tensor::slice(int64_t dim, int64_t start, int64_t end) const {
    // torch's slice: [start, end) along dim, end clamped to the size (so INT64_MAX reads "to the end").
    const int64_t size = this->size(dim);
    const int64_t stop = std::min(end, size), from = std::min(std::max<int64_t>(start, 0), stop);
    return call("narrow", *this, dim, from, stop - from);
}

// A number on the left is Python's reflected operator (2 - t is t.__rsub__(2)), which keeps the tensor's dtype.
#define TOOLKIT_BINARY_OPERATOR(OP, NAME)                                                                        \
    inline Tensor operator OP(const Tensor& a, const Tensor& b) { return call(NAME, a, b); }                    \
    inline Tensor operator OP(const Tensor& a, double b) { return call(NAME, a, b); }                           \
    inline Tensor operator OP(double a, const Tensor& b) {                                                      \
        py::gil_scoped_acquire gil;                                                                             \
        return detail::as_tensor(#OP, py::float_(a) OP b.ptr());                                                \
    }
TOOLKIT_BINARY_OPERATOR(+, "add")
TOOLKIT_BINARY_OPERATOR(-, "sub")
TOOLKIT_BINARY_OPERATOR(*, "mul")
TOOLKIT_BINARY_OPERATOR(/, "div")
#undef TOOLKIT_BINARY_OPERATOR
inline Tensor operator-(const Tensor& a) { return call("neg", a); }
// Comparisons give bool tensors (pybind11's own compare Python objects to a C++ bool).
inline Tensor operator>(const Tensor& a, const Tensor& b) { return call("gt", a, b); }
inline Tensor operator>(const Tensor& a, double b) { return call("gt", a, b); }
inline Tensor operator<(const Tensor& a, const Tensor& b) { return call("lt", a, b); }
inline Tensor operator<(const Tensor& a, double b) { return call("lt", a, b); }
}  // namespace toolkit
