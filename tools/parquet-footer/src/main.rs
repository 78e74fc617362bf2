//! Times the `parquet` crate's metadata decoder on one file, the way hepfmt times every other
//! decoder: bytes are loaded first and only the decode is timed ("memory"), then the same decode
//! through an open file whose pages are in the page cache ("disk"). With a page index present,
//! footer + page index is timed as well. Prints one JSON object (times in seconds).
//!
//! usage: parquet-footer FILE REPETITIONS

use std::fs::File;
use std::time::Instant;

use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};

fn decode<R: parquet::file::reader::ChunkReader>(reader: &R, page_index: bool) -> ParquetMetaData {
    let policy = if page_index { PageIndexPolicy::Required } else { PageIndexPolicy::Skip };
    ParquetMetaDataReader::new()
        .with_page_index_policy(policy)
        .parse_and_finish(reader)
        .unwrap_or_else(|e| fail(&format!("not a readable Parquet file ({e})")))
}

fn fail(msg: &str) -> ! {
    eprintln!("parquet-footer: {msg}");
    std::process::exit(2)
}

fn timed<F: FnMut() -> ParquetMetaData>(mut f: F) -> f64 {
    let start = Instant::now();
    let md = f();
    let elapsed = start.elapsed().as_secs_f64();
    std::hint::black_box(md);
    elapsed
}

fn list(xs: &[f64]) -> String {
    let parts: Vec<String> = xs.iter().map(|x| format!("{x:e}")).collect();
    format!("[{}]", parts.join(","))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        fail("usage: parquet-footer FILE REPETITIONS");
    }
    let path = &args[1];
    let reps: usize = args[2].parse().unwrap_or_else(|_| fail("REPETITIONS must be an integer"));
    let bytes = bytes_of(path);
    let first = decode(&bytes, false);
    let has_page_index = first
        .row_groups()
        .iter()
        .flat_map(|rg| rg.columns())
        .any(|c| c.offset_index_offset().is_some());
    let open = || File::open(path).unwrap_or_else(|e| fail(&format!("{path}: {e}")));
    // Untimed warm-up of every timed path (allocator, page cache, branch predictors).
    decode(&open(), false);
    if has_page_index {
        decode(&bytes, true);
    }
    let (mut memory, mut disk, mut memory_pi) = (vec![], vec![], vec![]);
    for _ in 0..reps {
        memory.push(timed(|| decode(&bytes, false)));
        disk.push(timed(|| decode(&open(), false)));
        if has_page_index {
            memory_pi.push(timed(|| decode(&bytes, true)));
        }
    }
    println!(
        "{{\"columns\":{},\"rows\":{},\"row_groups\":{},\"memory_s\":{},\"disk_s\":{},\"memory_page_index_s\":{}}}",
        first.file_metadata().schema_descr().num_columns(),
        first.file_metadata().num_rows(),
        first.num_row_groups(),
        list(&memory),
        list(&disk),
        list(&memory_pi)
    );
}

fn bytes_of(path: &str) -> bytes::Bytes {
    std::fs::read(path)
        .map(bytes::Bytes::from)
        .unwrap_or_else(|e| fail(&format!("{path}: {e}")))
}
