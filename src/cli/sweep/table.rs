//! The sweep's results: each variant's folder read back (`variant.json`, `report.json`,
//! its outputs), outputs checked against the reference variant's, and the ranked table in
//! text, JSON or CSV.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use metalsim_traces::Report;
use serde::Serialize;

use super::plan::{VariantInfo, output_elem};

/// A variant's result as its folder holds it.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// What the variant is.
    pub info: VariantInfo,
    /// Its folder.
    pub dir: PathBuf,
    /// Its report, or why there is none (the run failed or has not been run).
    pub report: Result<Report, String>,
}

/// Reads the variant folders under `dirs`: each is a variant's folder (it holds
/// `variant.json`) or a folder of them. Sorted by variant index; a repeated index is an
/// error.
pub fn load(dirs: &[PathBuf]) -> Result<Vec<Loaded>, String> {
    let mut found = Vec::new();
    for dir in dirs {
        if dir.join("variant.json").is_file() {
            found.push(load_one(dir)?);
            continue;
        }
        let entries =
            std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let mut subdirs: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("variant.json").is_file())
            .collect();
        if subdirs.is_empty() {
            return Err(format!(
                "{} holds no sweep variant (no variant.json in it or its folders)",
                dir.display()
            ));
        }
        subdirs.sort();
        for s in subdirs {
            found.push(load_one(&s)?);
        }
    }
    found.sort_by_key(|l| l.info.index);
    if let Some(w) = found
        .windows(2)
        .find(|w| w[0].info.index == w[1].info.index)
    {
        return Err(format!(
            "{} and {} are both variant {} (folders of two different sweeps?)",
            w[0].dir.display(),
            w[1].dir.display(),
            w[0].info.index
        ));
    }
    Ok(found)
}

fn load_one(dir: &Path) -> Result<Loaded, String> {
    let path = dir.join("variant.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let info: VariantInfo = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not a sweep variant: {e}", path.display()))?;
    let report_path = dir.join("report.json");
    let report = match std::fs::read_to_string(&report_path) {
        Ok(t) => serde_json::from_str::<Report>(&t)
            .map_err(|e| format!("{}: not a report: {e}", report_path.display())),
        Err(_) => {
            let log = std::fs::read_to_string(dir.join("run.log")).unwrap_or_default();
            let last = log.lines().rev().find(|l| !l.trim().is_empty());
            Err(match last {
                Some(l) => format!("no report: {}", l.trim()),
                None => "no report (not run yet?)".to_string(),
            })
        }
    };
    Ok(Loaded {
        info,
        dir: dir.to_path_buf(),
        report,
    })
}

/// One row of the table.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// 1 for the fastest; `None` for a flagged variant.
    pub rank: Option<usize>,
    /// The variant's position in the sweep.
    pub index: usize,
    /// The variant's folder name.
    pub name: String,
    /// The varied parameters.
    pub params: Vec<(String, String)>,
    /// The GPU model.
    pub model: String,
    /// Simulated time in microseconds.
    pub time_us: Option<f64>,
    /// The slowest ranked variant's time over this one's.
    pub speedup: Option<f64>,
    /// Achieved occupancy (fraction of the most SIMD-groups a core holds).
    pub occupancy: Option<f64>,
    /// What limits occupancy.
    pub limiter: Option<String>,
    /// Fraction of lanes doing work.
    pub simd_efficiency: Option<f64>,
    /// DRAM traffic per second of simulated time.
    pub dram_gb_per_s: Option<f64>,
    /// What limits the variant's time, in words (the report's `limiter.description`).
    pub top_limiter: Option<String>,
    /// Why the variant is not ranked (its outputs disagree, it faulted, it has no report).
    pub flag: Option<String>,
}

/// Checks every variant's outputs against the reference (the first without a fault or a
/// sanitizer error) and ranks the agreeing ones by time, fastest first; flagged ones
/// follow, unranked.
pub fn rows(loaded: &[Loaded]) -> Vec<Row> {
    let clean = |l: &Loaded| {
        matches!(&l.report, Ok(r) if r.fault.is_none()
            && !r.findings.iter().any(|f| f.severity == "error"))
    };
    let reference = loaded.iter().find(|l| clean(l));
    let mut rows: Vec<Row> = loaded
        .iter()
        .map(|l| {
            let flag = match &l.report {
                Err(e) => Some(e.clone()),
                Ok(r) if r.fault.is_some() => Some(format!(
                    "kernel fault: {}",
                    r.fault.as_ref().map(|f| f.message.as_str()).unwrap_or("")
                )),
                Ok(r) if r.findings.iter().any(|f| f.severity == "error") => Some(format!(
                    "the sanitizer found errors (see {})",
                    l.dir.join("report.json").display()
                )),
                Ok(_) => reference.and_then(|reference| disagreement(reference, l)),
            };
            let report = l.report.as_ref().ok();
            Row {
                rank: None,
                index: l.info.index,
                name: l.info.name.clone(),
                params: l.info.params.clone(),
                model: l.info.model.clone(),
                time_us: report.map(|r| r.time_us),
                speedup: None,
                occupancy: report.and_then(|r| r.occupancy.as_ref().map(|o| o.achieved)),
                limiter: report.and_then(|r| r.occupancy.as_ref().map(|o| o.limiter.clone())),
                simd_efficiency: report.map(|r| r.simd_efficiency),
                dram_gb_per_s: report.map(|r| r.memory.dram_gb_per_s),
                top_limiter: report.and_then(|r| r.limiter.as_ref().map(|l| l.description.clone())),
                flag,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        let key = |r: &Row| (r.flag.is_some(), r.time_us.unwrap_or(f64::INFINITY));
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
    });
    let slowest = rows
        .iter()
        .filter(|r| r.flag.is_none())
        .filter_map(|r| r.time_us)
        .fold(0.0f64, f64::max);
    for (i, r) in rows.iter_mut().filter(|r| r.flag.is_none()).enumerate() {
        r.rank = Some(i + 1);
        r.speedup = r.time_us.filter(|&t| t > 0.0).map(|t| slowest / t);
    }
    rows
}

/// Why `l`'s outputs disagree with `reference`'s, if they do.
fn disagreement(reference: &Loaded, l: &Loaded) -> Option<String> {
    if reference.info.index == l.info.index {
        return None;
    }
    if reference.info.outputs != l.info.outputs {
        return Some("its output buffers differ from the reference's".to_string());
    }
    for (name, elem) in &l.info.outputs {
        let Some(elem) = output_elem(elem) else {
            return Some(format!("output {name}: unknown element type {elem}"));
        };
        let read = |dir: &Path| {
            metalsim_launch::read_npy(&dir.join(format!("{name}.npy")), elem)
                .map_err(|e| e.to_string())
        };
        let (expected, got) = match (read(&reference.dir), read(&l.dir)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => return Some(format!("output {name}: {e}")),
        };
        if expected.0 != got.0 {
            return Some(format!(
                "output {name}: {} elements, the reference has {}",
                got.0, expected.0
            ));
        }
        let verdict =
            metalsim_crosscheck::compare::compare_buffer(elem, got.0, &expected.1, &got.1);
        if !verdict.matches {
            return Some(format!(
                "output {name} disagrees with {}: {}",
                reference.info.name, verdict.detail
            ));
        }
    }
    None
}

/// A variant's label: its varied values (`threadgroup=8x8 TILE=16`).
pub fn label(params: &[(String, String)]) -> String {
    if params.is_empty() {
        return "(base)".to_string();
    }
    params
        .iter()
        .map(|(k, v)| format!("{}={v}", k.rsplit('.').next().unwrap_or(k)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".to_string())
}

/// The table as aligned text, flagged variants listed below the ranking with the reason.
pub fn to_text(rows: &[Row]) -> String {
    let header = [
        "rank",
        "variant",
        "time (µs)",
        "speed-up",
        "occupancy",
        "limiter",
        "SIMD eff.",
        "DRAM GB/s",
        "top limiter",
    ];
    let cells: Vec<[String; 9]> = rows
        .iter()
        .map(|r| {
            [
                r.rank.map_or("-".to_string(), |k| k.to_string()),
                label(&r.params),
                opt(r.time_us, |t| format!("{t:.2}")),
                opt(r.speedup, |s| format!("{s:.2}x")),
                opt(r.occupancy, |o| format!("{:.0}%", o * 100.0)),
                r.limiter.clone().unwrap_or_else(|| "-".to_string()),
                opt(r.simd_efficiency, |e| format!("{:.0}%", e * 100.0)),
                opt(r.dram_gb_per_s, |d| format!("{d:.1}")),
                r.top_limiter.clone().unwrap_or_else(|| "-".to_string()),
            ]
        })
        .collect();
    let width = |i: usize| {
        cells
            .iter()
            .map(|c| c[i].chars().count())
            .chain([header[i].chars().count()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..9).map(width).collect();
    let line = |c: &[&str]| {
        let mut s = String::new();
        for (i, cell) in c.iter().enumerate() {
            let pad = widths[i] - cell.chars().count();
            if i == 1 || i == 5 || i == 8 {
                s.push_str(cell);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(cell);
            }
            s.push_str("  ");
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(&header);
    for c in &cells {
        out.push_str(&line(&c.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    let flagged: Vec<&Row> = rows.iter().filter(|r| r.flag.is_some()).collect();
    if flagged.is_empty() {
        let _ = writeln!(out, "all {} variants agree on their outputs", rows.len());
    } else {
        let _ = writeln!(out, "flagged, not ranked:");
        for r in flagged {
            let _ = writeln!(
                out,
                "  {}: {}",
                label(&r.params),
                r.flag.as_deref().unwrap_or("")
            );
        }
    }
    out
}

/// The rows as pretty JSON.
pub fn to_json(rows: &[Row]) -> String {
    serde_json::to_string_pretty(rows).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// The rows as CSV, one column per varied parameter then the figures.
pub fn to_csv(rows: &[Row]) -> Result<String, String> {
    let keys: Vec<String> = rows
        .first()
        .map(|r| r.params.iter().map(|(k, _)| k.clone()).collect())
        .unwrap_or_default();
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = vec!["rank".into(), "variant".into(), "model".into()];
    header.extend(keys.iter().cloned());
    header.extend(
        [
            "time_us",
            "speedup",
            "occupancy",
            "limiter",
            "simd_efficiency",
            "dram_gb_per_s",
            "top_limiter",
            "flag",
        ]
        .map(String::from),
    );
    w.write_record(&header).map_err(|e| e.to_string())?;
    let num = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    for r in rows {
        let mut rec = vec![
            r.rank.map(|k| k.to_string()).unwrap_or_default(),
            r.name.clone(),
            r.model.clone(),
        ];
        for k in &keys {
            rec.push(
                r.params
                    .iter()
                    .find(|(pk, _)| pk == k)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default(),
            );
        }
        rec.extend([
            num(r.time_us),
            num(r.speedup),
            num(r.occupancy),
            r.limiter.clone().unwrap_or_default(),
            num(r.simd_efficiency),
            num(r.dram_gb_per_s),
            r.top_limiter.clone().unwrap_or_default(),
            r.flag.clone().unwrap_or_default(),
        ]);
        w.write_record(&rec).map_err(|e| e.to_string())?;
    }
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(params: &[(&str, &str)], time: f64, flag: Option<&str>) -> Row {
        Row {
            rank: None,
            index: 0,
            name: "v".into(),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            model: "m1".into(),
            time_us: Some(time),
            speedup: None,
            occupancy: Some(0.5),
            limiter: Some("registers".into()),
            simd_efficiency: Some(1.0),
            dram_gb_per_s: Some(10.0),
            top_limiter: Some("DRAM bandwidth: 91% of peak".into()),
            flag: flag.map(String::from),
        }
    }

    fn check(rows: Vec<Row>) -> String {
        to_text(&rows)
    }

    #[test]
    fn text_table_aligns_columns_and_lists_flags() {
        let mut a = row(&[("template.TILE", "16")], 10.0, None);
        a.rank = Some(1);
        a.speedup = Some(2.0);
        let mut b = row(&[("template.TILE", "8")], 20.0, None);
        b.rank = Some(2);
        b.speedup = Some(1.0);
        let c = row(&[("template.TILE", "32")], 5.0, Some("output C disagrees"));
        let text = check(vec![a, b, c]);
        assert_eq!(
            text,
            "rank  variant  time (µs)  speed-up  occupancy  limiter    SIMD eff.  DRAM GB/s  top limiter\n\
             \x20  1  TILE=16      10.00     2.00x        50%  registers       100%       10.0  DRAM bandwidth: 91% of peak\n\
             \x20  2  TILE=8       20.00     1.00x        50%  registers       100%       10.0  DRAM bandwidth: 91% of peak\n\
             \x20  -  TILE=32       5.00         -        50%  registers       100%       10.0  DRAM bandwidth: 91% of peak\n\
             flagged, not ranked:\n\
             \x20 TILE=32: output C disagrees\n"
        );
    }

    #[test]
    fn csv_has_one_column_per_parameter() {
        let csv = to_csv(&[row(&[("threadgroup", "8x8")], 1.5, None)]).unwrap();
        assert_eq!(
            csv,
            "rank,variant,model,threadgroup,time_us,speedup,occupancy,limiter,simd_efficiency,dram_gb_per_s,top_limiter,flag\n\
             ,v,m1,8x8,1.5,,0.5,registers,1,10,DRAM bandwidth: 91% of peak,\n"
        );
    }
}
