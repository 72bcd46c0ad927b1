// resample-bridge TensorRT plugins: ResampleBridgeResize, ResampleBridgeGridSample, ResampleBridgeDeformConv
// (IPluginV3 + IPluginCreatorV3One, namespace RB_DOMAIN "resample_bridge", version "1").
//
// onnx-tensorrt creates them from the plugin nodes the TensorRT lowering writes: the node's attributes arrive as
// plugin fields (INT -> kINT32, FLOAT -> kFLOAT32, STRING -> kCHAR, INTS -> kINT32[n]). The op names and the
// fields are the shared attribute schema's, asked of the C ABI (rb_op_type, rb_attribute: ../kernels/rb/attrs.hpp
// visit(), the C++ side of semantics/schema.py). The plugin turns the fields into the kernels' text form
// ("name=value" per line) once, serializes that text as one field (rb_attributes), and computes with the shared
// kernels.
//
// enqueue runs the shared CUDA launchers (../cuda/rb_cuda.h) on TensorRT's stream; the host C ABI
// (../kernels/rb_kernels.h) serves build-time shape binding, the schema and the attribute vocabulary. Nothing
// here is compiled or run in this repository's CI: TensorRT is not installable from the package index.
#include <NvInferRuntime.h>
#include <cuda_runtime_api.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "rb_cuda.h"
#include "rb_kernels.h"
#include "rb/bind.hpp"

using namespace nvinfer1;

namespace rbtrt {

constexpr char const* kNamespace = RB_DOMAIN;
constexpr char const* kVersion = "1";
constexpr int32_t kSchemaVersion = RB_SCHEMA_VERSION;

enum class Op : int32_t { kResize = 0, kGridSample = 1, kDeformConv = 2 };  // the C ABI's op index

char const* opName(Op op) { return rb_op_type(static_cast<int32_t>(op)); }

// The fields each op's creator lists (getFieldNames): rb_schema, then the schema's attributes (the C ABI's type
// codes 0 INT, 1 FLOAT, 2 STRING, 3 INTS) but GridSample's spatial_rank, which the plugin reads from the input's
// rank, and Resize's integer_rounding, whose fixed point the CUDA kernels do not compute (semantics/schema.py: not
// tensorrt fields).
std::vector<PluginField> fieldSpecs(Op op) {
    static PluginFieldType const types[] = {PluginFieldType::kINT32, PluginFieldType::kFLOAT32,
                                            PluginFieldType::kCHAR, PluginFieldType::kINT32};
    std::vector<PluginField> out;
    out.emplace_back("rb_schema", nullptr, PluginFieldType::kINT32, 0);
    int32_t type = 0;
    for (int32_t i = 0; char const* name = rb_attribute(static_cast<int32_t>(op), i, &type); ++i) {
        if (op == Op::kGridSample && std::strcmp(name, "spatial_rank") == 0) continue;
        if (op == Op::kResize && std::strcmp(name, "integer_rounding") == 0) continue;
        out.emplace_back(name, nullptr, types[type], 0);
    }
    return out;
}

void logError(std::string const& msg) {
    std::fprintf(stderr, "[resample-bridge TensorRT plugin] %s\n", msg.c_str());
}

// Numbers to and from text with std::to_chars / from_chars (rb/attrs.hpp's text_numbers), not string streams:
// a toolchain that links libstdc++ statically puts its stream and locale code in this library, which crashed
// beside the host process's own (measured with the CPU library on an H100 host), and from_chars reads a decimal
// point whatever the locale says.
template <class T>
std::string numbersText(void const* data, int32_t n) {
    std::string s;
    char buf[32];
    for (int32_t i = 0; i < n; ++i) {
        auto const r = std::to_chars(buf, buf + sizeof buf, static_cast<T const*>(data)[i]);  // shortest round trip
        s.append(i ? " " : "").append(buf, r.ptr);
    }
    return s;
}

// One plugin field as the kernels' text form: strings without the trailing NUL, numbers space-separated.
std::string fieldText(PluginField const& f) {
    switch (f.type) {
    case PluginFieldType::kCHAR: {
        auto const* c = static_cast<char const*>(f.data);
        int32_t n = f.length;
        while (n > 0 && c[n - 1] == '\0') --n;
        return std::string(c, c + n);
    }
    case PluginFieldType::kINT32: return numbersText<int32_t>(f.data, f.length);
    case PluginFieldType::kINT64: return numbersText<int64_t>(f.data, f.length);
    case PluginFieldType::kFLOAT32: return numbersText<float>(f.data, f.length);
    case PluginFieldType::kFLOAT64: return numbersText<double>(f.data, f.length);
    default: return "";
    }
}

// A vocabulary name as the C ABI's index (rb_vocabulary field: 0 kind, 2 padding, 3 padding_on, 4 arith,
// 5 deform border), -1 when unknown.
int32_t vocabIndex(int32_t field, std::string const& name) {
    for (int32_t i = 0;; ++i) {
        char const* v = rb_vocabulary(field, i);
        if (!v) return -1;
        if (name == v) return i;
    }
}

int32_t dtypeCode(DataType t) {
    return t == DataType::kFLOAT ? 0 : t == DataType::kHALF ? 1 : -1;
}

using Shape = std::vector<int64_t>;

// A TensorRT tensor as the C ABI's rb_tensor; ``shape`` holds its dims for the call.
rb_tensor tensor(PluginTensorDesc const& d, void* data, Shape& shape) {
    shape.assign(d.dims.d, d.dims.d + d.dims.nbDims);
    return rb_tensor{data, dtypeCode(d.type), d.dims.nbDims, shape.data()};
}

// ------------------------------------------------------------------------------------------------------------

class Plugin : public IPluginV3, public IPluginV3OneCore, public IPluginV3OneBuild, public IPluginV3OneRuntime {
public:
    Plugin(Op op, std::string text) : mOp(op), mText(std::move(text)), mValues(rb::text_values(mText)) {
        mAxes = ints("axes");
        mSizesInput = value("sizes") == "input";
    }

    ~Plugin() override { rb_cuda_resize_release(mPlan); }
    Plugin(Plugin const&) = delete;
    Plugin& operator=(Plugin const&) = delete;

    // IPluginV3
    IPluginCapability* getCapabilityInterface(PluginCapabilityType type) noexcept override {
        switch (type) {
        case PluginCapabilityType::kCORE: return static_cast<IPluginV3OneCore*>(this);
        case PluginCapabilityType::kBUILD: return static_cast<IPluginV3OneBuild*>(this);
        case PluginCapabilityType::kRUNTIME: return static_cast<IPluginV3OneRuntime*>(this);
        }
        return nullptr;
    }
    IPluginV3* clone() noexcept override {
        try {
            return new Plugin(mOp, mText);
        } catch (...) {
            return nullptr;
        }
    }

    // IPluginV3OneCore
    AsciiChar const* getPluginName() const noexcept override { return opName(mOp); }
    AsciiChar const* getPluginVersion() const noexcept override { return kVersion; }
    AsciiChar const* getPluginNamespace() const noexcept override { return kNamespace; }

    // IPluginV3OneBuild
    int32_t getNbOutputs() const noexcept override { return 1; }

    int32_t configurePlugin(DynamicPluginTensorDesc const*, int32_t, DynamicPluginTensorDesc const*,
                            int32_t) noexcept override {
        return 0;
    }

    int32_t getOutputDataTypes(DataType* out, int32_t, DataType const* in, int32_t) const noexcept override {
        out[0] = in[0];
        return 0;
    }

    bool supportsFormatCombination(int32_t pos, DynamicPluginTensorDesc const* inOut, int32_t /*nbInputs*/,
                                   int32_t) noexcept override {
        PluginTensorDesc const& d = inOut[pos].desc;
        if (d.format != TensorFormat::kLINEAR) return false;
        if (d.type != DataType::kFLOAT && d.type != DataType::kHALF) return false;
        if (mOp == Op::kGridSample && pos == 1) return true;  // the grid keeps its own float type
        return pos == 0 || d.type == inOut[0].desc.type;      // data, weights and output share X's type
    }

    int32_t getOutputShapes(DimsExprs const* inputs, int32_t /*nbInputs*/, DimsExprs const* shapeInputs,
                            int32_t nbShapeInputs, DimsExprs* outputs, int32_t, IExprBuilder& b) noexcept override {
        try {
            if (mOp == Op::kGridSample) {  // [N, C, grid's spatial dims]
                DimsExprs const& x = inputs[0];
                DimsExprs const& g = inputs[1];
                outputs[0].nbDims = x.nbDims;
                outputs[0].d[0] = x.d[0];
                outputs[0].d[1] = x.d[1];
                for (int32_t i = 2; i < x.nbDims; ++i) outputs[0].d[i] = g.d[i - 1];
                return 0;
            }
            if (mOp == Op::kDeformConv) {  // [N, OC, offset's spatial dims]
                outputs[0] = inputs[2];
                outputs[0].d[0] = inputs[0].d[0];
                outputs[0].d[1] = inputs[1].d[0];
                return 0;
            }
            return resizeShape(inputs[0], nbShapeInputs ? &shapeInputs[0] : nullptr, outputs[0], b);
        } catch (std::exception const& e) {
            logError(std::string(opName(mOp)) + ": " + e.what());
            return -1;
        }
    }

    // IPluginV3OneRuntime
    int32_t onShapeChange(PluginTensorDesc const*, int32_t, PluginTensorDesc const*, int32_t) noexcept override {
        return 0;
    }

    int32_t enqueue(PluginTensorDesc const* inDesc, PluginTensorDesc const* outDesc, void const* const* inputs,
                    void* const* outputs, void*, cudaStream_t stream) noexcept override {
        try {
            return run(inDesc, outDesc, inputs, outputs, stream);
        } catch (std::exception const& e) {
            logError(std::string(opName(mOp)) + ": " + e.what());
            return -1;
        }
    }

    IPluginV3* attachToContext(IPluginResourceContext*) noexcept override { return clone(); }

    PluginFieldCollection const* getFieldsToSerialize() noexcept override {
        mSerialField = PluginField("rb_attributes", mText.c_str(), PluginFieldType::kCHAR,
                                   static_cast<int32_t>(mText.size() + 1));
        mSerialized.nbFields = 1;
        mSerialized.fields = &mSerialField;
        return &mSerialized;
    }

private:
    // Output dims of a resize: from the bound lengths when the input dims are known at build time; with
    // symbolic dims, the given sizes, or floor(L * p / q) for the floor rule, or the run-time sizes shape input.
    int32_t resizeShape(DimsExprs const& x, DimsExprs const* sizesInput, DimsExprs& out, IExprBuilder& b) {
        int32_t const rank = x.nbDims;
        out = x;
        bool allConstant = true;
        for (int32_t i = 0; i < rank; ++i) allConstant = allConstant && x.d[i]->isConstant();
        std::vector<int64_t> sizes;
        if (mSizesInput) {
            if (!sizesInput) throw std::runtime_error("sizes is 'input' but no shape input reached the plugin");
            bool constant = true;
            for (int32_t i = 0; i < sizesInput->nbDims; ++i) constant = constant && sizesInput->d[i]->isConstant();
            if (!constant || value("aspect_policy") != "stretch") {
                if (value("aspect_policy") != "stretch")
                    throw std::runtime_error("run-time sizes with a keep-aspect policy need constant sizes");
                for (size_t j = 0; j < mAxes.size(); ++j) out.d[mAxes[j]] = sizesInput->d[j];
                return 0;
            }
            for (int32_t i = 0; i < sizesInput->nbDims; ++i) sizes.push_back(sizesInput->d[i]->getConstantValue());
        }
        if (allConstant) {
            std::vector<int64_t> in(rank), o(rank);
            for (int32_t i = 0; i < rank; ++i) in[i] = x.d[i]->getConstantValue();
            std::vector<rb_axis> axes(rank);
            int32_t nAxes = 0;
            char err[512] = {0};
            rb_resize_runtime rt{};
            rt.sizes = sizes.empty() ? nullptr : sizes.data();
            rt.n_sizes = static_cast<int64_t>(sizes.size());
            if (rb_resize_bind(mText.c_str(), rank, in.data(), &rt, o.data(), &nAxes, axes.data(), err,
                               sizeof(err)) != 0)
                throw std::runtime_error(err);
            for (int32_t i = 0; i < rank; ++i) out.d[i] = b.constant(o[i]);
            return 0;
        }
        if (!value("pads").empty()) throw std::runtime_error("pads need constant input dims");
        std::string const sizesText = value("sizes");
        if (!sizesText.empty() && value("aspect_policy") == "stretch") {
            std::vector<int64_t> s = ints("sizes");
            for (size_t j = 0; j < mAxes.size(); ++j) out.d[mAxes[j]] = b.constant(s[j]);
            return 0;
        }
        if (value("size_rule") != "floor")
            throw std::runtime_error("output lengths under size rule '" + value("size_rule") +
                                     "' need constant input dims");
        std::vector<std::string> const scales = rb::words(value("scales"));
        for (size_t j = 0; j < mAxes.size() && j < scales.size(); ++j) {
            rb::Rat const q = rb::parse_rat(scales[j], "scales");
            auto const num = static_cast<int64_t>(q.num), den = static_cast<int64_t>(q.den);
            auto const* L = x.d[mAxes[j]];
            out.d[mAxes[j]] = b.operation(DimensionOperation::kFLOOR_DIV,
                                          *b.operation(DimensionOperation::kPROD, *L, *b.constant(num)),
                                          *b.constant(den));
        }
        return 0;
    }

    // Computes on the device with the shared CUDA launchers (../cuda/rb_cuda.h: the same kernel headers the
    // CPU launchers and the OpenVINO extension use, tested against the oracle), queued on TensorRT's stream.
    int32_t run(PluginTensorDesc const* inDesc, PluginTensorDesc const* outDesc, void const* const* inputs,
                void* const* outputs, cudaStream_t stream) {
        void* const s = static_cast<void*>(stream);
        char err[512] = {0};
        int rc = 0;
        int32_t const nIn = mOp == Op::kResize ? 1 : mOp == Op::kGridSample ? 2 : 3 + hasBias() + hasMask();
        std::vector<Shape> shapes(5);
        std::vector<rb_tensor> in(5, rb_tensor{nullptr, 0, 0, nullptr});
        for (int32_t i = 0; i < nIn; ++i) in[i] = tensor(inDesc[i], const_cast<void*>(inputs[i]), shapes[i]);
        Shape yShape;
        rb_tensor y = tensor(outDesc[0], outputs[0], yShape);
        if (mOp == Op::kResize) {
            std::vector<int64_t> sizes;
            if (mSizesInput)
                for (int64_t a : mAxes) sizes.push_back(outDesc[0].dims.d[a]);
            // Bound once per shape pair: the tables and scratch stay in device memory between calls.
            if (!mPlan || shapes[0] != mPlanIn || yShape != mPlanOut) {
                rb_cuda_resize_release(mPlan);
                mPlan = nullptr;
                rb_resize_runtime rt{};
                rt.sizes = sizes.empty() ? nullptr : sizes.data();
                rt.n_sizes = static_cast<int64_t>(sizes.size());
                if (rb_cuda_resize_prepare(mText.c_str(), &in[0], &rt, &y, s, &mPlan, err, sizeof(err)) != 0)
                    throw std::runtime_error(err);
                mPlanIn = shapes[0];
                mPlanOut = yShape;
            }
            rc = rb_cuda_resize_enqueue(mPlan, in[0].data, y.data, s, err, sizeof(err));
        } else if (mOp == Op::kGridSample) {
            rb_gridsample_params p{};
            p.kind = vocabIndex(0, value("sampler"));
            p.padding = vocabIndex(2, value("padding"));
            p.padding_on = vocabIndex(3, value("padding_on"));
            p.align_corners = value("align_corners") == "1";
            p.arith = vocabIndex(4, value("arith"));
            p.cubic_a = rational("cubic_a");
            rc = rb_cuda_gridsample(in.data(), 2, &p, &y, s, err, sizeof(err));
        } else {
            // ONNX order: B at 3, mask at 4 (the plugin's inputs are compacted: mask follows offset without B).
            if (hasMask() && !hasBias()) std::swap(in[3], in[4]);
            std::vector<int64_t> strides = ints("strides"), pads = ints("pads"),
                                 dil = ints("dilations");
            rb_deformconv_params p{};
            p.strides = strides.data();
            p.pads = pads.data();
            p.dilations = dil.data();
            p.group = integer("group");
            p.offset_group = integer("offset_group");
            p.kind = vocabIndex(0, value("sampler"));
            p.border = vocabIndex(5, value("border"));
            p.cubic_a = rational("cubic_a");
            rc = rb_cuda_deformconv(in.data(), 5, &p, &y, s, err, sizeof(err));
        }
        if (rc != 0) throw std::runtime_error(err);
        return 0;
    }

    // The attribute text's values, read once by the constructor (enqueue looks them up, it does not parse).
    std::string value(char const* name) const {
        auto const it = mValues.find(name);
        return it == mValues.end() ? std::string() : it->second;
    }
    std::vector<int64_t> ints(char const* name) const { return rb::text_numbers<int64_t>(name, value(name)); }
    int64_t integer(char const* name) const { return rb::text_number<int64_t>(name, value(name)); }
    // An exact rational "p/q" (or an integer) as a double; 0 where absent.
    double rational(char const* name) const {
        std::string const s = value(name);
        return s.empty() ? 0.0 : rb::parse_rat(s, name).to_double();
    }

    bool hasBias() const { return value("has_bias") == "1"; }
    bool hasMask() const { return value("has_mask") == "1"; }

    Op mOp;
    std::string mText;
    std::map<std::string, std::string> mValues;  // mText's name=value lines
    rb_cuda_resize* mPlan = nullptr;  // Resize bound to mPlanIn -> mPlanOut (rb_cuda_resize_prepare)
    Shape mPlanIn, mPlanOut;
    std::vector<int64_t> mAxes;
    bool mSizesInput = false;
    PluginField mSerialField;
    PluginFieldCollection mSerialized{};
};

// ------------------------------------------------------------------------------------------------------------

class Creator : public IPluginCreatorV3One {
public:
    explicit Creator(Op op) : mOp(op), mFields(fieldSpecs(op)) {
        mFields.emplace_back("rb_attributes", nullptr, PluginFieldType::kCHAR, 0);  // the serialized form
        mCollection.nbFields = static_cast<int32_t>(mFields.size());
        mCollection.fields = mFields.data();
    }

    IPluginV3* createPlugin(AsciiChar const* name, PluginFieldCollection const* fc, TensorRTPhase) noexcept override {
        try {
            std::string text;
            int32_t schema = -1;
            for (int32_t i = 0; i < fc->nbFields; ++i) {
                PluginField const& f = fc->fields[i];
                if (!f.name || !f.data) continue;
                if (std::strcmp(f.name, "rb_attributes") == 0) return new Plugin(mOp, fieldText(f));
                if (std::strcmp(f.name, "rb_schema") == 0) {
                    schema = *static_cast<int32_t const*>(f.data);
                    continue;
                }
                text += std::string(f.name) + "=" + fieldText(f) + "\n";
            }
            if (schema != kSchemaVersion) {
                logError(std::string(opName(mOp)) + " node " + (name ? name : "?") + ": attribute schema " +
                         std::to_string(schema) + ", this plugin reads " + std::to_string(kSchemaVersion));
                return nullptr;
            }
            return new Plugin(mOp, text);
        } catch (std::exception const& e) {
            logError(e.what());
            return nullptr;
        }
    }

    PluginFieldCollection const* getFieldNames() noexcept override { return &mCollection; }
    AsciiChar const* getPluginName() const noexcept override { return opName(mOp); }
    AsciiChar const* getPluginVersion() const noexcept override { return kVersion; }
    AsciiChar const* getPluginNamespace() const noexcept override { return kNamespace; }

private:
    Op mOp;
    std::vector<PluginField> mFields;
    PluginFieldCollection mCollection{};
};

Creator& creator(Op op) {
    static Creator resize(Op::kResize), grid(Op::kGridSample), deform(Op::kDeformConv);
    return op == Op::kResize ? resize : op == Op::kGridSample ? grid : deform;
}

// Static registration at load time (trtexec --staticPlugins, ctypes.CDLL): the creators' own namespace.
struct Registrar {
    Registrar() {
        for (Op op : {Op::kResize, Op::kGridSample, Op::kDeformConv})
            getPluginRegistry()->registerCreator(creator(op), kNamespace);
    }
};

}  // namespace rbtrt

#ifndef RB_TRT_NO_STATIC_REGISTRATION
static rbtrt::Registrar gRegistrar;
#endif

// Dynamic loading (IPluginRegistry::loadLibrary, trtexec --dynamicPlugins / --setPluginsToSerialize). Build with
// -DRB_TRT_NO_STATIC_REGISTRATION for that use: loadLibrary fails when the creators are already registered.
extern "C" {
__attribute__((visibility("default"))) void setLoggerFinder(ILoggerFinder*) {}

__attribute__((visibility("default"))) IPluginCreatorInterface* const* getCreators(int32_t& nbCreators) {
    static IPluginCreatorInterface* const creators[] = {&rbtrt::creator(rbtrt::Op::kResize),
                                                        &rbtrt::creator(rbtrt::Op::kGridSample),
                                                        &rbtrt::creator(rbtrt::Op::kDeformConv)};
    nbCreators = 3;
    return creators;
}
}
