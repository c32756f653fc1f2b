//! `--output DIR` and `--force`: where a command writes its arrays, as `.npy` files.
//!
//! A directory that exists is not written into without `--force` (the check runs before
//! any work, so a refused run leaves it untouched); with `--force` the command's files
//! in it are replaced and other files are left alone.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use npyz::WriterBuilder;

/// The output options of a command that writes arrays.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OutputArgs {
    /// Write the arrays as .npy files into DIR (created if missing).
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Write into DIR even if it exists, replacing this command's files in it.
    #[arg(long, requires = "output")]
    pub force: bool,
}

impl OutputArgs {
    /// The output directory, checked: `None` without `--output`.
    ///
    /// # Errors
    /// The path exists and is not a directory, or is a directory and `--force` is not
    /// given.
    pub fn prepare(&self) -> anyhow::Result<Option<OutputDir>> {
        self.output.as_deref().map(|path| prepare_dir(path, self.force)).transpose()
    }
}

/// Checks `path` as an output directory: missing (it is created on the first write), or a
/// directory and `force`.
///
/// # Errors
/// The path exists and is not a directory, or is a directory and `force` is false.
pub fn prepare_dir(path: &Path, force: bool) -> anyhow::Result<OutputDir> {
    match fs::metadata(path) {
        Ok(meta) if !meta.is_dir() => bail!("{}: exists and is not a directory", path.display()),
        Ok(_) if !force => {
            bail!("{}: the output directory exists; pass --force to write into it", path.display())
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => bail!("{}: {e}", path.display()),
    }
    Ok(OutputDir { path: path.to_path_buf(), written: Vec::new() })
}

/// A checked output directory and the files written into it so far.
#[derive(Debug)]
pub struct OutputDir {
    path: PathBuf,
    written: Vec<String>,
}

impl OutputDir {
    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Names of the files written so far.
    pub fn written(&self) -> &[String] {
        &self.written
    }

    /// The path of `DIR/<name>`, creating the directory first, for a writer of its own
    /// (which calls [`OutputDir::record`] once the file is complete).
    ///
    /// # Errors
    /// The directory cannot be created.
    pub fn file(&self, name: &str) -> anyhow::Result<PathBuf> {
        fs::create_dir_all(&self.path).map_err(|e| anyhow!("{}: cannot create: {e}", self.path.display()))?;
        Ok(self.path.join(name))
    }

    /// Records `name` as written (by a writer that took its path from [`OutputDir::file`]).
    pub fn record(&mut self, name: String) {
        if !self.written.contains(&name) {
            self.written.push(name);
        }
    }

    /// Writes `data` as `DIR/<name>.npy` of `shape` (C order; the product of `shape`
    /// must be `data.len()`), creating the directory first.
    ///
    /// # Errors
    /// File-system errors, naming the file.
    pub fn write<T: npyz::AutoSerialize>(&mut self, name: &str, shape: &[usize], data: &[T]) -> anyhow::Result<()> {
        debug_assert_eq!(shape.iter().product::<usize>(), data.len());
        fs::create_dir_all(&self.path).map_err(|e| anyhow!("{}: cannot create: {e}", self.path.display()))?;
        let file_name = format!("{name}.npy");
        let path = self.path.join(&file_name);
        let fail = |e: std::io::Error| anyhow!("{}: cannot write: {e}", path.display());
        let file = File::create(&path).map_err(fail)?;
        let shape: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
        let mut writer = npyz::WriteOptions::new()
            .default_dtype()
            .shape(&shape)
            .writer(BufWriter::new(file))
            .begin_nd()
            .map_err(fail)?;
        for value in data {
            writer.push(value).map_err(fail)?;
        }
        writer.finish().map_err(fail)?;
        self.record(file_name);
        Ok(())
    }

    /// Writes a 1-D array `DIR/<name>.npy`.
    ///
    /// # Errors
    /// As [`OutputDir::write`].
    pub fn write_1d<T: npyz::AutoSerialize>(&mut self, name: &str, data: &[T]) -> anyhow::Result<()> {
        self.write(name, &[data.len()], data)
    }

    /// Writes `text` as `DIR/<name>` (e.g. the statistics as JSON).
    ///
    /// # Errors
    /// File-system errors, naming the file.
    pub fn write_text(&mut self, name: &str, text: &str) -> anyhow::Result<()> {
        fs::create_dir_all(&self.path).map_err(|e| anyhow!("{}: cannot create: {e}", self.path.display()))?;
        let path = self.path.join(name);
        let mut file = File::create(&path).map_err(|e| anyhow!("{}: cannot write: {e}", path.display()))?;
        file.write_all(text.as_bytes()).map_err(|e| anyhow!("{}: cannot write: {e}", path.display()))?;
        self.record(name.to_owned());
        Ok(())
    }
}
