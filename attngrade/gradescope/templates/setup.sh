#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image for
# {{ homework }} (made by attngrade {{ version }} with `grade autograder`).
#
# It installs attngrade from the wheel in this zip into its own virtual environment,
# {{ venv }}, which run_autograder uses. attngrade needs Python 3.10 or newer: the
# Python on the image is used when it is recent enough, otherwise one is installed
# with apt.
#
# ATTNGRADE_VENV overrides where the environment goes; ATTNGRADE_SETUP_PYTHON names
# the Python to create it with (both for testing the autograder off Gradescope).
set -euo pipefail

SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${ATTNGRADE_VENV:-{{ venv }}}"
WHEEL="$SOURCE/"{{ wheel | shquote }}

recent_enough() {
  "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' >/dev/null 2>&1
}

find_python() {
  local candidate
  for candidate in "${ATTNGRADE_SETUP_PYTHON:-}" python3 python3.13 python3.12 python3.11 python3.10; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 && recent_enough "$candidate"; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends "$@"
}

install_python() {
  echo "attngrade setup: no Python 3.10 or newer found; installing one with apt"
  apt-get update -y
  apt_install ca-certificates python3 python3-venv python3-pip
  find_python >/dev/null && return 0
  # Older images (e.g. Ubuntu 20.04) have a newer Python as a separate package, or in the
  # deadsnakes archive.
  local version
  for version in 3.12 3.11 3.10; do
    if apt-cache show "python$version-venv" >/dev/null 2>&1; then
      apt_install "python$version" "python$version-venv" && return 0
    fi
  done
  apt_install software-properties-common gnupg
  add-apt-repository -y ppa:deadsnakes/ppa
  apt-get update -y
  apt_install python3.11 python3.11-venv
}

PYTHON="$(find_python || true)"
if [ -z "$PYTHON" ]; then
  if [ -n "${ATTNGRADE_SETUP_PYTHON:-}" ]; then
    echo "attngrade setup: ATTNGRADE_SETUP_PYTHON=$ATTNGRADE_SETUP_PYTHON is not Python 3.10 or newer" >&2
    exit 1
  fi
  install_python
  PYTHON="$(find_python)"
fi
echo "attngrade setup: using $PYTHON ($("$PYTHON" --version 2>&1))"

rm -rf "$VENV"
if ! "$PYTHON" -m venv "$VENV"; then
  # Debian and Ubuntu ship venv (ensurepip) separately from Python itself.
  rm -rf "$VENV"
  if [ -n "${ATTNGRADE_SETUP_PYTHON:-}" ]; then
    echo "attngrade setup: $PYTHON cannot create a virtual environment" >&2
    exit 1
  fi
  minor="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  apt-get update -y
  apt_install python3-venv "python$minor-venv"
  "$PYTHON" -m venv "$VENV"
fi

export PIP_DISABLE_PIP_VERSION_CHECK=1
"$VENV/bin/python" -m pip install --quiet --upgrade pip || echo "attngrade setup: could not upgrade pip; going on"
"$VENV/bin/python" -m pip install --quiet "$WHEEL"
{% if torch %}
# Parts of this homework run student PyTorch code (in a sandbox): the CPU build, not the CUDA one.
"$VENV/bin/python" -m pip install --quiet --index-url {{ torch_index | shquote }} {{ torch | shquote }}
{% endif %}

# Fail the build now, not at the first submission, if the install does not work: the homework
# is loaded as grading loads it (an instructor's own homework from its folder in this zip).
"$VENV/bin/python" -m attngrade problems {% if homework_folder %}"$SOURCE/"{{ homework_folder | shquote }}{% else %}{{ homework | shquote }}{% endif %} >/dev/null
{% if torch %}
# The source folder holds the keys and the reference solution: only root may read it, so no student's
# code (run as a uid of its own) can, even where the kernel has no Landlock to keep it out.
chmod -R go-rwx "$SOURCE"
# The self-check: the reference solution's code is graded here as a submission's would be. Where this
# container cannot run code, it says why; each submission's code points then wait for course staff.
"$VENV/bin/python" -m attngrade gradescope --root "$(dirname "$SOURCE")" --prove || \
  echo "attngrade setup: WARNING: this container cannot grade the code parts (above); their points will wait for course staff"
{% endif %}
echo "attngrade setup: attngrade $("$VENV/bin/python" -c 'import attngrade; print(attngrade.__version__)') is installed in $VENV"
