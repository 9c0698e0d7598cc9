# forge toolchain image of a cross cell: debian.Dockerfile (Debian @SUITE@, gcc @GCC@, python @PYTHON@, the
# cross g++ and qemu-user) plus the target's own Python from Debian multiarch (dpkg architecture
# @DPKG_ARCH@): its headers and libpython, which ember's wheel is built against and run with under
# the emulator (forge/wheel.py). The instructions before that layer are debian.Dockerfile's, so the
# engine's layer cache shares them. Rendered by forge/images.py; every placeholder is part of the hash.
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
RUN useradd --create-home --uid @UID@ --user-group forge \
 && useradd --create-home --uid @UID_B@ --gid forge forge-b \
 && mkdir -p /src /build /stage /verify-build /ccache \
 && chown forge:forge /build /stage /verify-build /ccache \
 && chmod 2775 /build /stage /verify-build
# Multi-Arch: same packages install beside the build machine's; python3.11 itself cannot (Multi-Arch:
# allowed), so the wheel steps start the target's libpython through a small launcher they compile.
# They bring the target's glibc to /lib/@MULTIARCH@, where the target's loader looks first; under
# `qemu -L /usr/@MULTIARCH@` the link makes that path the cross sysroot's lib/, so every program keeps
# the sysroot's loader and glibc together (a loader of one glibc build with another's libc.so.6 hangs
# threaded programs), and only what the sysroot lacks (libpython, its libraries) comes from multiarch.
RUN dpkg --add-architecture @DPKG_ARCH@ \
 && apt-get update \
 && apt-get install -y --no-install-recommends @FOREIGN_PACKAGES@ \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s . /usr/@MULTIARCH@/lib/@MULTIARCH@
ENV PATH=/opt/forge-venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    CC=gcc-@GCC@ CXX=g++-@GCC@ CCACHE_DIR=/ccache
USER forge
WORKDIR /build
