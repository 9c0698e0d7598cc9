# forge CUDA toolchain image: debian.Dockerfile plus the cell's CUDA toolkit (nvcc, runtime, CCCL,
# cuobjdump) from PyPI wheels. Kept as its own template so the CPU images' content hashes do not move.
# forge toolchain image: Debian @SUITE@ with gcc @GCC@, the suite's python @PYTHON@, cmake, ninja,
# ccache and Eigen from Debian, pinned pip packages in a venv, and a non-root build user.
# Rendered by forge/images.py; every placeholder is an argument and is part of the image's content hash.
FROM @BASE@
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
# The host's local CA certificates (a TLS-inspecting proxy's, say), so pip trusts what the host does.
COPY ca/ /usr/local/share/ca-certificates/forge/
RUN apt-get update \
 && apt-get install -y --no-install-recommends @APT_PACKAGES@ \
 && rm -rf /var/lib/apt/lists/* \
 && update-ca-certificates
# A venv because Debian's python refuses system-wide pip installs (PEP 668) from bookworm on.
# requirements.txt is rendered from the toolchain lock: each wheel pinned by its sha256 once the
# lock records it (then pip requires the hashes). pip downloads first, the wheels' sha256 are kept for
# the lock, and only those files are installed, with no index.
COPY requirements.txt /opt/forge-requirements.txt
RUN python3 -m venv /opt/forge-venv \
 && export PIP_CERT=/etc/ssl/certs/ca-certificates.crt PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
 && /opt/forge-venv/bin/python -m pip download --no-deps --only-binary=:all: @PIP_HASH_FLAGS@ \
      -d /tmp/forge-wheels -r /opt/forge-requirements.txt \
 && (cd /tmp/forge-wheels && sha256sum -- *.whl) > /opt/forge-venv/forge-wheels.sha256 \
 && /opt/forge-venv/bin/python -m pip install --no-index --no-deps @PIP_HASH_FLAGS@ \
      --find-links /tmp/forge-wheels -r /opt/forge-requirements.txt \
 && rm -rf /tmp/forge-wheels
# forge builds; forge-b (another uid, same group) is the user of repro's second build, so the
# build directories are group-writable. The compiler cache stays forge's alone.
# The CUDA toolkit of the cell, from the exactly pinned wheels of toolchains/cuda/wheels.yaml installed
# above, linked at /opt/cuda in the layout nvcc.profile and CMake's FindCUDAToolkit expect: lib64
# (nvcc links with -L$TOP/lib64) and an unversioned libcudart.so. nvcc compiles host code with the
# cell's g++ (CUDAHOSTCXX), so its host_config.h limits apply to the cell's gcc.
RUN set -e; set -- /opt/forge-venv/lib/python3*/site-packages/nvidia/cu*; \
    if [ "$#" -ne 1 ] || [ ! -x "$1/bin/nvcc" ]; then echo "expected one CUDA toolkit with nvcc, found: $*" >&2; exit 1; fi; \
    ln -s lib "$1/lib64"; \
    ln -s "$(cd "$1/lib" && ls libcudart.so.* | head -n 1)" "$1/lib/libcudart.so"; \
    ln -s "$1" /opt/cuda; \
    /opt/cuda/bin/nvcc --version; /opt/cuda/bin/cuobjdump --version
RUN useradd --create-home --uid @UID@ --user-group forge \
 && useradd --create-home --uid @UID_B@ --gid forge forge-b \
 && mkdir -p /src /build /stage /verify-build /ccache \
 && chown forge:forge /build /stage /verify-build /ccache \
 && chmod 2775 /build /stage /verify-build
ENV PATH=/opt/cuda/bin:/opt/forge-venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    CC=gcc-@GCC@ CXX=g++-@GCC@ CCACHE_DIR=/ccache \
    CUDACXX=/opt/cuda/bin/nvcc CUDAHOSTCXX=g++-@GCC@ CUDAToolkit_ROOT=/opt/cuda
USER forge
WORKDIR /build
