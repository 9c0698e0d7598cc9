# forge CUDA toolchain image: Debian @SUITE@ with gcc @GCC@ and python @PYTHON@ as in debian.Dockerfile,
# plus the cell's CUDA toolkit from the suite's own
# archive (Debian packages nvcc in non-free, with helpers in contrib): @APT_COMPONENTS@ enabled for
# this image only, the packages of toolchains/cuda/debian.yaml installed by apt with the others,
# and their versions pinned by the image's lock. Kept as its own template so no other image's
# content hash moves.
# Rendered by forge/images.py; every placeholder is an argument and is part of the image's content hash.
FROM @BASE@
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
# The host's local CA certificates (a TLS-inspecting proxy's, say), so pip trusts what the host does.
COPY ca/ /usr/local/share/ca-certificates/forge/
# The base's sources.list is debootstrap's one line, "deb <mirror> @SUITE@ main"; the components
# are added to it (no mirror is named here) and checked, so a changed base fails here, not in apt.
RUN sed -i -E 's/^(deb [^ ]+ @SUITE@ main)$/\1 @APT_COMPONENTS@/' /etc/apt/sources.list \
 && grep -qx 'deb [^ ]* @SUITE@ main @APT_COMPONENTS@' /etc/apt/sources.list \
 && apt-get update \
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
# Debian's nvcc (toolchains/cuda/debian.yaml says which path CMake gets, and why) compiles host
# code with the cell's g++ (CUDAHOSTCXX, which CMake passes as -ccbin), so its host_config.h limits
# apply to the cell's gcc; the runtime is linked statically (libcudart_static.a) and cuobjdump
# reads the fatbinaries after install. Each is checked here, so an image without them is never tagged.
RUN set -e; @NVCC@ --version; @CUOBJDUMP@ --version; \
    test -f "/usr/lib/$(gcc-@GCC@ -print-multiarch)/libcudart_static.a"; \
    echo 'int main() { return 0; }' > /tmp/forge-probe.cu; \
    @NVCC@ -ccbin g++-@GCC@ -o /tmp/forge-probe /tmp/forge-probe.cu; /tmp/forge-probe; rm -f /tmp/forge-probe*
# forge builds; forge-b (another uid, same group) is the user of repro's second build, so the
# build directories are group-writable. The compiler cache stays forge's alone.
RUN useradd --create-home --uid @UID@ --user-group forge \
 && useradd --create-home --uid @UID_B@ --gid forge forge-b \
 && mkdir -p /src /build /stage /verify-build /ccache \
 && chown forge:forge /build /stage /verify-build /ccache \
 && chmod 2775 /build /stage /verify-build
ENV PATH=/opt/forge-venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    CC=gcc-@GCC@ CXX=g++-@GCC@ CCACHE_DIR=/ccache \
    CUDACXX=@NVCC@ CUDAHOSTCXX=g++-@GCC@
USER forge
WORKDIR /build
