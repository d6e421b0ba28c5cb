//! PyTorch's names for element types in `torch.save` files: the legacy storage classes
//! (`torch.FloatStorage`, ...) that `_rebuild_tensor_v2` records carry, one per dtype tapegrad
//! has, and the dtype objects `_rebuild_tensor_v3` names for the dtypes tapegrad lacks.

use crate::DType;

/// The storage class of each of tapegrad's 12 dtypes.
const STORAGE_CLASSES: [(DType, &str); 12] = [
    (DType::Bool, "BoolStorage"),
    (DType::U8, "ByteStorage"),
    (DType::I8, "CharStorage"),
    (DType::I16, "ShortStorage"),
    (DType::I32, "IntStorage"),
    (DType::I64, "LongStorage"),
    (DType::F16, "HalfStorage"),
    (DType::BF16, "BFloat16Storage"),
    (DType::F32, "FloatStorage"),
    (DType::F64, "DoubleStorage"),
    (DType::C64, "ComplexFloatStorage"),
    (DType::C128, "ComplexDoubleStorage"),
];

/// torch dtypes without a legacy storage class, which torch writes with `_rebuild_tensor_v3`
/// and tapegrad refuses (`Unsupported`, naming the dtype).
const V3_DTYPES: [&str; 31] = [
    "uint16",
    "uint32",
    "uint64",
    "complex32",
    "chalf",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float4_e2m1fn_x2",
    "bits1x8",
    "bits2x4",
    "bits4x2",
    "bits8",
    "bits16",
    "uint1",
    "uint2",
    "uint3",
    "uint4",
    "uint5",
    "uint6",
    "uint7",
    "int1",
    "int2",
    "int3",
    "int4",
    "int5",
    "int6",
    "int7",
    "bcomplex32",
];

/// The dtype of `torch.<name>` when `name` is a storage class tapegrad reads.
pub(crate) fn storage_class_dtype(name: &str) -> Option<DType> {
    STORAGE_CLASSES
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(d, _)| *d)
}

/// The storage class name of `dtype`.
pub(crate) fn storage_class(dtype: DType) -> &'static str {
    STORAGE_CLASSES
        .iter()
        .find(|(d, _)| *d == dtype)
        .map(|(_, n)| *n)
        .expect("every dtype has a storage class")
}

/// True when `torch.<name>` is a dtype object `_rebuild_tensor_v3` may name.
pub(crate) fn torch_dtype_name(name: &str) -> bool {
    V3_DTYPES.contains(&name)
}
