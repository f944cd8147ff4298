//! Model files written before a format change keep loading and predicting the same numbers:
//! `fixtures/model_v1/` holds a file of every model kind written at commit dee001b (format
//! version 1) with the predictions `trustgp predict` printed for it then.

use std::path::PathBuf;

use trustgp::data::read_inputs;
use trustgp::estimators::file::load;
use trustgp::estimators::ModelKind;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/model_v1")
        .join(name)
}

/// The CSV that `trustgp predict` wrote: header and one row of numbers per query row.
fn printed(name: &str) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    (header, rows)
}

#[test]
fn version_1_files_of_every_model_predict_as_when_they_were_written() {
    for kind in ModelKind::ALL {
        let name = kind.name();
        let model = load(&fixture(&format!("{name}.json"))).unwrap();
        assert_eq!(model.kind(), kind);
        let x = read_inputs(&fixture("query.csv"), &model.inputs).unwrap();
        for latent in [false, true] {
            let suffix = if latent { "_latent" } else { "" };
            let (header, rows) = printed(&format!("{name}{suffix}.csv"));
            let preds = model.predict(x.as_ref(), latent).unwrap();
            assert_eq!(header.len(), 2 * preds.len(), "{name}");
            assert_eq!(rows.len(), x.nrows(), "{name}");
            for (t, p) in preds.iter().enumerate() {
                assert_eq!(header[2 * t], format!("mean_{}", p.target));
                for (i, row) in rows.iter().enumerate() {
                    // Printed in the shortest form that reads back exactly: equal bit for bit.
                    assert_eq!(row[2 * t].to_bits(), p.mean[i].to_bits(), "{name} mean {i}");
                    assert_eq!(
                        row[2 * t + 1].to_bits(),
                        p.std[i].to_bits(),
                        "{name} std {i}"
                    );
                }
            }
        }
    }
}
