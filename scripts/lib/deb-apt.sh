# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# A private apt configuration for fetching Debian packages of another suite or architecture with
# apt-get download, apt-cache show: its own sources.list, lists, cache and an empty dpkg status in
# a directory of its own, so the host's apt sources, lists and dpkg architectures stay as they are
# (the host's /etc/apt/apt.conf.d, e.g. a proxy, still applies). Source it, then:
#   deb_apt_setup DIR DEBARCH SUITE   write DIR/apt.conf for SUITE (and SUITE-security) on MIRROR
#                                     (default deb.debian.org), export APT_CONFIG, apt-get update
# Lists already in DIR younger than DEB_APT_MAX_AGE minutes (default 1440) are not fetched again.

deb_apt_setup() {
	local dir=$1 debarch=$2 suite=$3 mirror=${MIRROR:-http://deb.debian.org}
	local key=/usr/share/keyrings/debian-archive-keyring.gpg
	command -v apt-get >/dev/null || { echo "deb-apt: apt-get not found" >&2; return 1; }
	mkdir -p "$dir/lists/partial" "$dir/archives/partial"
	[ -e "$dir/status" ] || : >"$dir/status"
	cat >"$dir/sources.list" <<-EOS
		deb [signed-by=$key] $mirror/debian $suite main
		deb [signed-by=$key] $mirror/debian-security $suite-security main
	EOS
	cat >"$dir/apt.conf" <<-EOS
		APT::Architecture "$debarch";
		APT::Architectures { "$debarch"; };
		APT::Sandbox::User "$(id -un)";
		Dir::State "$dir";
		Dir::State::status "$dir/status";
		Dir::Cache "$dir";
		Dir::Etc::SourceList "$dir/sources.list";
		Dir::Etc::SourceParts "$dir/none";
	EOS
	export APT_CONFIG=$dir/apt.conf
	if [ -z "$(find "$dir/lists" -maxdepth 1 -name '*_Packages*' -mmin -"${DEB_APT_MAX_AGE:-1440}" \
		-print -quit)" ]; then
		apt-get -qq update >&2 || { echo "deb-apt: apt-get update failed for $suite on $mirror" >&2; return 1; }
	fi
}
