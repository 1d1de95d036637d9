//! JSON for floating-point figures that may be non-finite. JSON has no infinity or NaN (serde_json
//! writes `null`, which then reads back as a missing number), so such figures are written as the
//! strings `"inf"`, `"-inf"` and `"nan"` and read back from them. Use with
//! `#[serde(with = "kernelab_model::float")]`.

use serde::{Deserialize, Deserializer, Serializer};

/// Writes `x` as a number, or as `"inf"`, `"-inf"` or `"nan"`.
pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if x.is_finite() {
        s.serialize_f64(*x)
    } else if x.is_nan() {
        s.serialize_str("nan")
    } else if *x > 0.0 {
        s.serialize_str("inf")
    } else {
        s.serialize_str("-inf")
    }
}

/// Reads a number, or one of the strings `"inf"`, `"-inf"`, `"nan"`.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Repr {
        Number(f64),
        Text(String),
    }
    match Repr::deserialize(d)? {
        Repr::Number(x) => Ok(x),
        Repr::Text(t) => match t.as_str() {
            "inf" => Ok(f64::INFINITY),
            "-inf" => Ok(f64::NEG_INFINITY),
            "nan" => Ok(f64::NAN),
            other => Err(serde::de::Error::custom(format!(
                "expected a number, \"inf\", \"-inf\" or \"nan\", found {other:?}"
            ))),
        },
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Serialize, Deserialize)]
    struct F {
        #[serde(with = "crate::float")]
        x: f64,
    }

    #[test]
    fn non_finite_round_trips() {
        for (x, text) in [
            (1.5, r#"{"x":1.5}"#),
            (f64::INFINITY, r#"{"x":"inf"}"#),
            (f64::NEG_INFINITY, r#"{"x":"-inf"}"#),
        ] {
            let s = serde_json::to_string(&F { x }).expect("writes");
            assert_eq!(s, text);
            let back: F = serde_json::from_str(&s).expect("reads");
            assert_eq!(back.x, x);
        }
        let nan: F = serde_json::from_str(r#"{"x":"nan"}"#).expect("reads");
        assert!(nan.x.is_nan());
        assert!(serde_json::from_str::<F>(r#"{"x":"big"}"#).is_err());
        assert!(serde_json::from_str::<F>(r#"{"x":null}"#).is_err());
    }
}
